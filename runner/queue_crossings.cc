#include "runner/queue_crossings.h"

#include <algorithm>
#include <memory>
#include <unordered_map>

#include "runner/captured_port_frames.h"

namespace etwire::runner {

namespace {

uint64_t copy_key(const nic::Packet& packet) {
  return (static_cast<uint64_t>(packet.dest_qpn & nic::kPsnMask) << 24) |
         (packet.psn & nic::kPsnMask);
}

}  // namespace

CrossingsTo collect_crossings(const control::RunPlan& plan, const std::string& lab, size_t port) {
  const PortsByAddress addresses = ports_by_address(plan);
  const std::vector<std::unique_ptr<CapturedPortFrames>> captures =
      open_lab_captures(plan, lab, addresses);
  CrossingsTo out;
  // When each copy of a frame toward `port` was sent, in the sender's order.
  struct Copies {
    uint32_t from = 0;
    std::vector<clock::Nanos> times;
  };
  std::unordered_map<uint64_t, Copies> sent;
  for (size_t p = 0; p < captures.size(); ++p) {
    if (p == port) continue;
    twin::SentFrame frame;
    while (captures[p]->next(frame)) {
      if (!frame.packet.is_data() || frame.packet.dst_port != port) continue;
      Copies& copies = sent[copy_key(frame.packet)];
      copies.from = static_cast<uint32_t>(p);
      copies.times.push_back(frame.at);
      ++out.data_sent;
    }
  }
  // A port's files hold each direction in order, but the queues of a DPDK port may interleave.
  for (auto& [key, copies] : sent) std::sort(copies.times.begin(), copies.times.end());
  captures[port]->set_on_received([&](const nic::Packet& packet, clock::Nanos at) {
    if (!packet.is_data()) return;
    ++out.data_arrived;
    const auto copies = sent.find(copy_key(packet));
    if (copies == sent.end()) {
      ++out.unmatched;
      return;
    }
    const std::vector<clock::Nanos>& times = copies->second.times;
    const auto after = std::upper_bound(times.begin(), times.end(), at);
    if (after == times.begin()) {
      ++out.unmatched;
      return;
    }
    out.crossings.push_back(
        {*(after - 1), at, packet.wire_bytes, copies->second.from, packet.ecn == nic::ecn::kCe});
  });
  captures[port]->finish();
  return out;
}

}  // namespace etwire::runner

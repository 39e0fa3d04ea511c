#include "twin/replay/as_sent_replay.h"

#include <algorithm>
#include <memory>

#include "clock/line_rate.h"

namespace etwire::twin {

namespace {

// Counts what the twin delivers to one host.
class HostReceiver final : public nic::PacketReceiver {
 public:
  explicit HostReceiver(ArrivalTally& tally) : tally_(&tally) {}
  void receive(const nic::Packet& packet, clock::Nanos now) override { tally_->count(packet, now); }

 private:
  ArrivalTally* tally_;
};

// Puts each host's frames on its wire: one event per frame, at its stamp or when the host's wire
// frees, whichever is later. Tags are host indexes.
class Sender final : public clock::EventHandler {
 public:
  Sender(FabricTwin& twin, clock::Scheduler& clock, std::span<SentFrames* const> sources,
         AsSentResult& result)
      : twin_(twin), clock_(clock), sources_(sources), result_(result), hosts_(sources.size()) {
    for (size_t h = 0; h < sources.size(); ++h) {
      if (sources[h] == nullptr) continue;
      hosts_[h].wire = clock::LineRateTimer(twin.port(h).speed_bps());
      schedule_next(h, 0);
    }
  }

  bool done() const { return sending_ == 0; }

  void on_event(uint64_t tag, clock::Nanos now) override {
    const size_t h = static_cast<size_t>(tag);
    Host& host = hosts_[h];
    twin_.port(h).transmit(host.next.packet, now);
    host.wire.transmit(now, host.next.packet.wire_bytes);
    ReplayedHost& out = result_.hosts[h];
    ++out.sent;
    if (now > host.next.at) {
      ++out.held;
      out.longest_hold = std::max(out.longest_hold, now - host.next.at);
    }
    --sending_;
    schedule_next(h, now);
  }

 private:
  struct Host {
    SentFrame next;
    clock::LineRateTimer wire;
  };

  void schedule_next(size_t h, clock::Nanos now) {
    Host& host = hosts_[h];
    if (!sources_[h]->next(host.next)) return;
    host.next.packet.src_port = static_cast<uint32_t>(h);
    // A stamp earlier than the last start (a capture's directions or queues interleaved) starts
    // at once; a busy wire holds the frame until it frees.
    const clock::Nanos start = std::max({host.next.at, host.wire.free_at(), now});
    ++sending_;
    clock_.run_at(start, this, h);
  }

  FabricTwin& twin_;
  clock::Scheduler& clock_;
  std::span<SentFrames* const> sources_;
  AsSentResult& result_;
  std::vector<Host> hosts_;
  size_t sending_ = 0;  // hosts with a frame scheduled
};

}  // namespace

AsSentResult replay_as_sent(FabricTwin& twin, clock::VirtualClock& clock,
                            std::span<SentFrames* const> sources) {
  AsSentResult result;
  result.hosts.resize(twin.ports());
  std::vector<std::unique_ptr<HostReceiver>> receivers;
  for (size_t h = 0; h < twin.ports(); ++h) {
    receivers.push_back(std::make_unique<HostReceiver>(result.hosts[h].arrived));
    twin.port(h).set_receiver(receivers.back().get());
  }
  const size_t hosts = std::min(sources.size(), twin.ports());
  Sender sender(twin, clock, sources.first(hosts), result);
  const uint64_t events_before = clock.events_run();
  // Pause refreshes or a configured storm may keep the twin's clock busy after the last frame:
  // the replay ends with its frames.
  while (!clock.idle() && !(sender.done() && twin.packets_in_fabric() == 0)) clock.poll();
  result.end = clock.now();
  result.events = clock.events_run() - events_before;
  for (size_t h = 0; h < twin.ports(); ++h) twin.port(h).set_receiver(nullptr);
  return result;
}

}  // namespace etwire::twin

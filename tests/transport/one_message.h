// One message over an ideal wire that loses (or trims) chosen PSNs once each: what the
// receivers' loss handling tests look at.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <vector>

#include "clock/virtual_clock.h"
#include "nic/frame_size.h"
#include "tests/transport/ideal_wire.h"
#include "tests/transport/recording_observer.h"
#include "transport/transport.h"

namespace etwire::transport::testing {

// One message of `packets` packets from port 0 to port 1 over an ideal wire that loses each PSN
// of `lost` once (or, `trim`, delivers it cut to its headers as a trimming switch does): the
// PSNs sent, in order, and the flow's record.
struct OneMessage {
  std::vector<uint32_t> psns;
  FlowRecord record;
  TransportPortCounters sender;
  TransportPortCounters receiver;
};

inline OneMessage send_one_message(const config::TransportConfig& config, uint32_t packets,
                                   std::vector<uint32_t> lost, bool trim = false) {
  clock::VirtualClock clock;
  IdealWire wire(clock, 2, 100'000'000'000, 1'000);
  RecordingObserver observer;
  Transport transport(config, clock, observer);
  transport.add_port(wire.port(0), {}, {});
  transport.add_port(wire.port(1), {}, {});
  wire.set_hook([&lost, trim](nic::Packet& packet, clock::Nanos) {
    const auto it = std::find(lost.begin(), lost.end(), packet.psn);
    if (!packet.is_data() || it == lost.end()) return Verdict::kDeliver;
    lost.erase(it);
    if (!trim) return Verdict::kDrop;
    packet.wire_bytes = nic::trimmed_wire_bytes(packet);
    packet.payload_bytes = 0;
    packet.trimmed = true;
    return Verdict::kDeliver;
  });
  const auto connection = transport.connect(0, 1, 49152);
  transport.post(connection, uint64_t{packets} * config.pmtu, {});
  while (!clock.idle()) clock.poll();
  OneMessage out;
  for (const auto& sent : wire.sent()) {
    if (sent.packet.is_data()) out.psns.push_back(sent.packet.psn);
  }
  EXPECT_EQ(observer.finished.size(), 1u);
  if (!observer.finished.empty()) out.record = observer.finished.front();
  out.sender = transport.port_counters(0);
  out.receiver = transport.port_counters(1);
  return out;
}

}  // namespace etwire::transport::testing

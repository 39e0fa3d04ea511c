// Packet trimming (fabric.trimming): a data packet the switch has no room for goes on cut to its
// headers in the trimming class, ahead of the queue that overflowed, and is counted as trimmed,
// not dropped; without trimming, or for what is not data, the switch drops as before.
#include <gtest/gtest.h>

#include <algorithm>

#include "clock/virtual_clock.h"
#include "nic/frame_size.h"
#include "tests/twin/nic_driver.h"
#include "twin/fabric/fabric_twin.h"

namespace etwire::twin::testing {
namespace {

constexpr uint32_t kPayload = 1000;
constexpr uint32_t kSent = 100;

// A WRITE FIRST of PSN `psn` in class 2 with a 1000-byte payload, sized as a NIC sizes it.
nic::Packet full_packet(uint32_t psn, uint32_t payload = kPayload) {
  nic::Packet packet = data_packet(0, 1, 0, psn, 2);
  packet.opcode = nic::opcode::kWriteFirst;
  packet.payload_bytes = payload;
  packet.wire_bytes = nic::wire_bytes(packet, nic::FrameFormat{});
  return packet;
}

struct Overflow {
  std::vector<Delivery> received;
  WireCounters egress;
  QueueSample data_queue;
  QueueSample trimming_queue;
};

// kSent packets from a 100G port into a 25G one through a switch buffer of 10 kB: most find no
// room.
Overflow overflow(bool trimming, uint8_t trimming_priority = 7,
                  uint64_t trimming_queue = 64 * 1024) {
  config::FabricConfig config = quiet_fabric();
  config.buffer.size_bytes = 10'000;
  config.buffer.ingress_reserve_bytes = 0;
  config.trimming.enabled = trimming;
  config.trimming.priority = trimming_priority;
  config.trimming.queue_bytes = trimming_queue;
  clock::VirtualClock clock;
  std::vector<TwinPortSpec> ports{{"fast", k100G}, {"slow", k25G}};
  FabricTwin twin(config, ports, clock, 1);
  NicDriver driver(twin, clock);
  for (uint32_t i = 0; i < kSent; ++i) driver.send(full_packet(i));
  clock.run_until(clock::kNever);
  EXPECT_EQ(twin.packets_in_fabric(), 0u);
  return {driver.data_received_by(1), twin.switch_port_counters(1), twin.queue(1, 2),
          twin.queue(1, trimming_priority)};
}

size_t whole_packets(const Overflow& got) {
  return static_cast<size_t>(std::count_if(got.received.begin(), got.received.end(),
                                           [](const Delivery& d) { return !d.packet.trimmed; }));
}

TEST(FabricTwinTrimming, APacketWithoutRoomArrivesCutToItsHeadersInTheTrimmingClass) {
  const Overflow got = overflow(true);
  // Every packet arrives, whole or trimmed; none is dropped.
  ASSERT_EQ(got.received.size(), kSent);
  EXPECT_EQ(got.egress.drops_buffer, 0u);
  EXPECT_GT(got.egress.trimmed, 0u);
  EXPECT_EQ(got.data_queue.trimmed, got.egress.trimmed);
  EXPECT_EQ(got.data_queue.drops, 0u);
  // The headers alone: the frame a NIC would make of the packet without its payload.
  const uint32_t header_bytes = full_packet(0, 0).wire_bytes;
  uint64_t trimmed = 0;
  for (const Delivery& d : got.received) {
    if (!d.packet.trimmed) {
      EXPECT_EQ(d.packet.payload_bytes, kPayload);
      EXPECT_EQ(d.packet.priority, 2);
      continue;
    }
    ++trimmed;
    EXPECT_EQ(d.packet.payload_bytes, 0u);
    EXPECT_EQ(d.packet.priority, 7);
    EXPECT_EQ(d.packet.wire_bytes, header_bytes);
  }
  EXPECT_EQ(trimmed, got.egress.trimmed);
  EXPECT_EQ(got.trimming_queue.enqueued_packets, trimmed);
}

TEST(FabricTwinTrimming, TrimmedHeadersOvertakeTheQueueThatOverflowed) {
  const Overflow got = overflow(true);
  // The first trimmed PSN arrives before some whole packet of a lower PSN that was queued
  // ahead of it: strict priority sends the headers first.
  const auto first_trimmed = std::find_if(got.received.begin(), got.received.end(),
                                          [](const Delivery& d) { return d.packet.trimmed; });
  ASSERT_NE(first_trimmed, got.received.end());
  const bool overtook = std::any_of(first_trimmed, got.received.end(), [&](const Delivery& d) {
    return !d.packet.trimmed && d.packet.psn < first_trimmed->packet.psn;
  });
  EXPECT_TRUE(overtook);
}

TEST(FabricTwinTrimming, WithoutTrimmingTheSamePacketsAreDropped) {
  const Overflow trimmed = overflow(true);
  const Overflow dropped = overflow(false);
  EXPECT_EQ(dropped.egress.trimmed, 0u);
  EXPECT_EQ(dropped.egress.drops_buffer + dropped.received.size(), kSent);
  // Headers go on the wire first, so with trimming no more whole packets get through than
  // without.
  EXPECT_LE(whole_packets(trimmed), dropped.received.size());
  EXPECT_GT(whole_packets(trimmed), 0u);
}

TEST(FabricTwinTrimming, TheTrimmingClassIsConfigurable) {
  const Overflow got = overflow(true, 5);
  ASSERT_GT(got.egress.trimmed, 0u);
  for (const Delivery& d : got.received) {
    if (d.packet.trimmed) {
      EXPECT_EQ(d.packet.priority, 5);
    }
  }
  EXPECT_EQ(got.trimming_queue.enqueued_packets, got.egress.trimmed);
}

TEST(FabricTwinTrimming, HeadersBeyondTheTrimmingQueueAreDropped) {
  // Room for two headers waiting: the 100G sender cuts headers faster than 25G drains them.
  const uint32_t header_bytes = full_packet(0, 0).wire_bytes;
  const Overflow got = overflow(true, 7, 2 * header_bytes);
  EXPECT_GT(got.egress.trimmed, 0u);
  EXPECT_GT(got.egress.drops_buffer, 0u);
  EXPECT_EQ(got.data_queue.trimmed + got.data_queue.drops, kSent - whole_packets(got));
  EXPECT_EQ(got.received.size() + got.egress.drops_buffer, kSent);
  EXPECT_LE(got.trimming_queue.max_depth_bytes, 2 * header_bytes);
}

TEST(FabricTwinTrimming, OnlyDataIsTrimmed) {
  // Acknowledgements that find no room are dropped whole: there is nothing to cut.
  config::FabricConfig config = quiet_fabric();
  config.buffer.size_bytes = 10'000;
  config.buffer.ingress_reserve_bytes = 0;
  config.trimming.enabled = true;
  clock::VirtualClock clock;
  std::vector<TwinPortSpec> ports{{"fast", k100G}, {"slow", k25G}};
  FabricTwin twin(config, ports, clock, 1);
  NicDriver driver(twin, clock);
  for (uint32_t i = 0; i < kSent; ++i) {
    nic::Packet ack = data_packet(0, 1, 1000, i, 2);
    ack.opcode = nic::opcode::kAcknowledge;
    driver.send(ack);
  }
  clock.run_until(clock::kNever);
  const WireCounters& egress = twin.switch_port_counters(1);
  EXPECT_EQ(egress.trimmed, 0u);
  EXPECT_GT(egress.drops_buffer, 0u);
  EXPECT_EQ(egress.drops_buffer + driver.data_received_by(1).size(), kSent);
}

}  // namespace
}  // namespace etwire::twin::testing

// A transport opens only the local half of a connection: two transports, each driving one port,
// carry a connection between them with the requester on one and the responder on the other, as
// two workers, processes or hosts do. Packets address the other half by its port and QP number;
// the sending side keeps the flow records, the receiving side reports each delivered message by
// the requester's QP number. Both halves in one transport join directly.
#include <gtest/gtest.h>

#include <stdexcept>

#include "clock/virtual_clock.h"
#include "nic/packet.h"
#include "tests/transport/ideal_wire.h"
#include "tests/transport/recording_observer.h"
#include "transport/transport.h"

namespace etwire::transport {
namespace {

constexpr uint64_t k100G = 100'000'000'000;
constexpr uint32_t kRequesterQpn = 0x101;
constexpr uint32_t kResponderQpn = 0x202;

struct SplitRig {
  SplitRig()
      : wire(clock, 2, k100G, 1'000),
        sender(config, clock, sender_events),
        receiver(config, clock, receiver_events) {
    // Each transport's only port is its index 0; packets name the ports by their wire index.
    sender.add_port(wire.port(0), {}, {}, 0);
    receiver.add_port(wire.port(1), {}, {}, 1);
    sender.open_requester(0, kRequesterQpn, 1, kResponderQpn, 49152);
    receiver.open_responder(0, kResponderQpn, 0, kRequesterQpn, 49152);
  }
  void run() {
    while (!clock.idle()) clock.poll();
  }

  config::TransportConfig config;
  clock::VirtualClock clock;
  testing::IdealWire wire;
  testing::RecordingObserver sender_events;
  testing::RecordingObserver receiver_events;
  Transport sender;
  Transport receiver;
};

TEST(LocalHalves, EachSideReportsItsHalfOfEveryMessage) {
  SplitRig rig;
  rig.sender.post(kRequesterQpn, 3 * 4096, {});
  rig.sender.post(kRequesterQpn, 100, {});
  rig.run();

  // The sender finished both in order; it never saw them arrive, so no delivery time.
  ASSERT_EQ(rig.sender_events.finished.size(), 2u);
  EXPECT_TRUE(rig.sender_events.delivered.empty());
  for (const FlowRecord& record : rig.sender_events.finished) {
    EXPECT_EQ(record.status, FlowStatus::kCompleted);
    EXPECT_EQ(record.delivered_at, clock::kNever);
    EXPECT_EQ(record.qpn, kRequesterQpn);
    EXPECT_EQ(record.dest_qpn, kResponderQpn);
    EXPECT_EQ(record.src_port, 0u);
    EXPECT_EQ(record.dst_port, 1u);
  }
  // The receiver reported two deliveries from that requester, in order, before the ACKs that
  // finished them reached the sender.
  ASSERT_EQ(rig.receiver_events.remote_deliveries.size(), 2u);
  EXPECT_TRUE(rig.receiver_events.finished.empty());
  const auto& first = rig.receiver_events.remote_deliveries[0];
  const auto& second = rig.receiver_events.remote_deliveries[1];
  EXPECT_EQ(first.requester_qpn, kRequesterQpn);
  EXPECT_LT(first.at, second.at);
  EXPECT_LT(first.at, rig.sender_events.finished[0].finished_at);
  EXPECT_LT(second.at, rig.sender_events.finished[1].finished_at);
  // The sender's port carried the data, the receiver's the acknowledgements.
  EXPECT_EQ(rig.sender.port_counters(0).data_packets, 4u);
  EXPECT_EQ(rig.receiver.port_counters(0).acks_sent, rig.sender.port_counters(0).acks_received);
  EXPECT_EQ(rig.receiver.port_counters(0).stale_packets, 0u);
  EXPECT_EQ(rig.sender.port_counters(0).stale_packets, 0u);
}

// A message's wire tag rides in its last packet's immediate to a receiver that holds only the
// responder half: how a process that did not post it tells which message arrived.
TEST(LocalHalves, TheReceiverLearnsEachMessagesWireTag) {
  SplitRig rig;
  FlowTags tagged;
  tagged.wire_tag = 0xC0FFEE;
  rig.sender.post(kRequesterQpn, 3 * 4096, tagged);
  tagged.wire_tag = 7;
  rig.sender.post(kRequesterQpn, 100, tagged);
  rig.run();
  ASSERT_EQ(rig.receiver_events.remote_deliveries.size(), 2u);
  EXPECT_EQ(rig.receiver_events.remote_deliveries[0].immediate, 0xC0FFEEu);
  EXPECT_EQ(rig.receiver_events.remote_deliveries[1].immediate, 7u);
}

TEST(LocalHalves, PostingOnAQpNotOpenHereIsRefused) {
  SplitRig rig;
  EXPECT_THROW(rig.receiver.post(kRequesterQpn, 4096, {}), std::invalid_argument);
  EXPECT_THROW(rig.sender.post(kResponderQpn, 4096, {}), std::invalid_argument);
}

TEST(LocalHalves, AQpNumberIsTakenOncePerRoleAndFitsIn24Bits) {
  SplitRig rig;
  EXPECT_THROW(rig.sender.open_requester(0, kRequesterQpn, 1, 0x303, 49152), std::invalid_argument);
  // The same number as a responder is another QP's half (RC QPs both send and receive).
  EXPECT_NO_THROW(rig.sender.open_responder(0, kRequesterQpn, 1, 0x303, 49152));
  EXPECT_THROW(rig.sender.open_requester(0, 1u << 24, 1, 0x303, 49152), std::invalid_argument);
  EXPECT_THROW(rig.sender.open_requester(1, 0x404, 1, 0x303, 49152), std::invalid_argument);
}

TEST(LocalHalves, DataForAnUnknownQpIsCountedStale) {
  SplitRig rig;
  rig.sender.open_requester(0, 0x111, 1, 0x999, 49152);  // no responder 0x999 anywhere
  rig.sender.post(0x111, 4096, {});
  rig.clock.run_until(1'000'000);
  EXPECT_GT(rig.receiver.port_counters(0).stale_packets, 0u);
  EXPECT_TRUE(rig.receiver_events.remote_deliveries.empty());
}

// A CNP for a connection that has failed is ignored, but the port still counts it as received:
// the notification point's count of those it sent is held against the port's.
TEST(LocalHalves, ACnpForAFailedConnectionIsCountedByItsPort) {
  SplitRig rig;
  rig.sender.open_requester(0, 0x111, 1, 0x999, 49152);  // no responder: its retries run out
  rig.sender.post(0x111, 4096, {});
  rig.clock.run_until(10'000'000'000);
  ASSERT_EQ(rig.sender_events.finished.size(), 1u);
  ASSERT_EQ(rig.sender_events.finished[0].status, FlowStatus::kRetryExceeded);
  const uint64_t stale_before = rig.sender.port_counters(0).stale_packets;

  nic::Packet cnp;
  cnp.opcode = nic::opcode::kCnp;
  cnp.src_port = 1;
  cnp.dst_port = 0;
  cnp.dest_qpn = 0x111;
  cnp.wire_bytes = 64;
  rig.wire.port(1).transmit(cnp, rig.clock.now());
  rig.run();
  EXPECT_EQ(rig.sender.port_counters(0).cnps_received, 1u);
  EXPECT_EQ(rig.sender.port_counters(0).stale_packets, stale_before + 1);
  EXPECT_EQ(rig.sender.requester(0x111).reaction_point.cnps_received(), 0u);
}

TEST(LocalHalves, BothHalvesInOneTransportJoinDirectly) {
  config::TransportConfig config;
  clock::VirtualClock clock;
  testing::IdealWire wire(clock, 2, k100G, 1'000);
  testing::RecordingObserver events;
  Transport transport(config, clock, events);
  transport.add_port(wire.port(0), {}, {});
  transport.add_port(wire.port(1), {}, {});
  // Opened in either order, the halves find each other.
  transport.open_responder(1, kResponderQpn, 0, kRequesterQpn, 49152);
  transport.open_requester(0, kRequesterQpn, 1, kResponderQpn, 49152);
  transport.post(kRequesterQpn, 2 * 4096, {});
  while (!clock.idle()) clock.poll();

  ASSERT_EQ(events.delivered.size(), 1u);
  ASSERT_EQ(events.finished.size(), 1u);
  EXPECT_TRUE(events.remote_deliveries.empty());
  EXPECT_NE(events.finished[0].delivered_at, clock::kNever);
  EXPECT_EQ(events.finished[0].delivered_at, events.delivered[0].delivered_at);
  EXPECT_EQ(events.finished[0].qpn, kRequesterQpn);
  EXPECT_EQ(events.finished[0].dest_qpn, kResponderQpn);
}

}  // namespace
}  // namespace etwire::transport

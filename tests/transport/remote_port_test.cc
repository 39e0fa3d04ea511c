// Two transports, each driving one end of a connection (as two DPDK workers do): the sending
// one keeps the flow records, the receiving one reports each delivered message by connection.
// The same holds when the receiving one drives the sending port too, through another queue.
#include <gtest/gtest.h>

#include <stdexcept>

#include "clock/virtual_clock.h"
#include "nic/frame_size.h"
#include "tests/transport/ideal_wire.h"
#include "tests/transport/recording_observer.h"
#include "transport/transport.h"

namespace etwire::transport {
namespace {

constexpr uint64_t k100G = 100'000'000'000;

struct SplitRig {
  SplitRig()
      : wire(clock, 2, k100G, 1'000),
        sender(config, clock, sender_events),
        receiver(config, clock, receiver_events) {
    // The same port indexes in both: 0 is the sender's, 1 the receiver's.
    sender.add_port(wire.port(0), {}, {});
    sender.add_remote_port({}, {}, k100G);
    receiver.add_remote_port({}, {}, k100G);
    receiver.add_port(wire.port(1), {}, {});
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

TEST(RemotePort, EachSideReportsItsHalfOfEveryMessage) {
  SplitRig rig;
  const ConnectionId at_sender = rig.sender.connect(0, 1, 49152);
  const ConnectionId at_receiver = rig.receiver.connect(0, 1, 49152);
  ASSERT_EQ(at_sender.requester, at_receiver.requester);
  rig.sender.post(at_sender, 3 * 4096, {});
  rig.sender.post(at_sender, 100, {});
  rig.run();

  // The sender finished both in order; it never saw them arrive, so no delivery time.
  ASSERT_EQ(rig.sender_events.finished.size(), 2u);
  EXPECT_TRUE(rig.sender_events.delivered.empty());
  for (const FlowRecord& record : rig.sender_events.finished) {
    EXPECT_EQ(record.status, FlowStatus::kCompleted);
    EXPECT_EQ(record.delivered_at, clock::kNever);
  }
  // The receiver reported two deliveries of that connection, in order, before the ACKs that
  // finished them reached the sender.
  ASSERT_EQ(rig.receiver_events.remote_deliveries.size(), 2u);
  EXPECT_TRUE(rig.receiver_events.finished.empty());
  const auto& first = rig.receiver_events.remote_deliveries[0];
  const auto& second = rig.receiver_events.remote_deliveries[1];
  EXPECT_EQ(first.connection, at_receiver.requester);
  EXPECT_LT(first.at, second.at);
  EXPECT_LT(first.at, rig.sender_events.finished[0].finished_at);
  EXPECT_LT(second.at, rig.sender_events.finished[1].finished_at);
  // The sender's port carried the data, the receiver's the acknowledgements.
  EXPECT_EQ(rig.sender.port_counters(0).data_packets, 4u);
  EXPECT_EQ(rig.receiver.port_counters(1).acks_sent, rig.sender.port_counters(0).acks_received);
}

TEST(RemotePort, PostingWhereTheSendingPortIsRemoteIsRefused) {
  SplitRig rig;
  const ConnectionId at_receiver = rig.receiver.connect(0, 1, 49152);
  EXPECT_THROW(rig.receiver.post(at_receiver, 4096, {}), std::logic_error);
}

// A port of several queues: the receiving transport drives a queue of the sending port too (here
// a port that is not on the wire), yet the connection's requester is the sender's.
class OtherQueue final : public nic::Port {
 public:
  void transmit(const nic::Packet&, clock::Nanos) override { ++transmitted; }
  uint64_t speed_bps() const override { return k100G; }
  void set_receiver(nic::PacketReceiver*) override {}
  int transmitted = 0;
};

TEST(RemotePort, ARequesterDrivenElsewhereOnALocalPortIsReportedAsRemote) {
  config::TransportConfig config;
  clock::VirtualClock clock;
  testing::IdealWire wire(clock, 2, k100G, 1'000);
  testing::RecordingObserver sender_events;
  testing::RecordingObserver receiver_events;
  OtherQueue other_queue;  // outlives the transport that drives it
  Transport sender(config, clock, sender_events);
  Transport receiver(config, clock, receiver_events);
  sender.add_port(wire.port(0), {}, {});
  sender.add_remote_port({}, {}, k100G);
  receiver.add_port(other_queue, {}, {});
  receiver.add_port(wire.port(1), {}, {});
  const ConnectionId at_sender = sender.connect(0, 1, 49152);
  const ConnectionId at_receiver = receiver.connect(0, 1, 49152);
  receiver.set_requester_elsewhere(at_receiver);
  EXPECT_THROW(receiver.post(at_receiver, 4096, {}), std::logic_error);
  sender.post(at_sender, 2 * 4096, {});
  while (!clock.idle()) clock.poll();

  ASSERT_EQ(sender_events.finished.size(), 1u);
  EXPECT_EQ(sender_events.finished[0].status, FlowStatus::kCompleted);
  ASSERT_EQ(receiver_events.remote_deliveries.size(), 1u);
  EXPECT_EQ(receiver_events.remote_deliveries[0].connection, at_receiver.requester);
  EXPECT_TRUE(receiver_events.delivered.empty());
  EXPECT_EQ(other_queue.transmitted, 0);  // the receiver's copy of the requester never sends
}

}  // namespace
}  // namespace etwire::transport

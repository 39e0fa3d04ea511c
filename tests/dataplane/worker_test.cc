// Workers are told of every connection and open only the halves they drive; a connection whose
// halves are on two workers carries messages between them, the wire joining the halves.
#include "dataplane/worker.h"

#include <gtest/gtest.h>

#include <stdexcept>

#include "clock/virtual_clock.h"
#include "tests/transport/ideal_wire.h"
#include "tests/transport/recording_observer.h"

namespace etwire::dataplane {
namespace {

constexpr uint64_t k100G = 100'000'000'000;

struct TwoWorkers {
  TwoWorkers()
      : wire(clock, 3, k100G, 1'000),
        left(config, clock, left_events),
        right(config, clock, right_events) {
    // Run port 0 on the left worker; run port 1 on the right, as its queue 1; run port 2 is
    // nobody's here.
    left.add_port(wire.port(0), 0, 0, {}, {});
    right.add_port(wire.port(1), 1, 1, {}, {});
  }
  void run() {
    while (!clock.idle()) clock.poll();
  }
  // Posts `bytes` on the left worker's requester 0x10 and runs: the message completes, and the
  // right worker reports its delivery.
  void send_across(uint64_t bytes) {
    left.post(0x10, bytes, {});
    run();
    ASSERT_EQ(left_events.finished.size(), 1u);
    EXPECT_EQ(left_events.finished[0].status, transport::FlowStatus::kCompleted);
    ASSERT_EQ(right_events.remote_deliveries.size(), 1u);
    EXPECT_EQ(right_events.remote_deliveries[0].requester_qpn, 0x10u);
  }

  config::TransportConfig config;
  clock::VirtualClock clock;
  transport::testing::IdealWire wire;
  transport::testing::RecordingObserver left_events;
  transport::testing::RecordingObserver right_events;
  Worker left;
  Worker right;
};

TEST(Worker, OpensOnlyTheHalvesItDrives) {
  TwoWorkers rig;
  const HalfPlace requester{0, 0, 0x10};
  const HalfPlace responder{1, 1, 0x20};
  rig.left.open(requester, responder, 49152);
  rig.right.open(requester, responder, 49152);
  EXPECT_TRUE(rig.left.drives(0));
  EXPECT_FALSE(rig.left.drives(1));
  EXPECT_FALSE(rig.right.drives(2));
  // The requester is the left worker's only.
  EXPECT_THROW(rig.right.post(0x10, 4096, {}), std::invalid_argument);
  rig.send_across(3 * 4096);
  EXPECT_EQ(rig.left.counters(0).data_packets, 3u);
  EXPECT_EQ(rig.right.counters(1).acks_sent, rig.left.counters(0).acks_received);
}

TEST(Worker, AHalfOnAnotherQueueOfItsPortIsNotOpened) {
  TwoWorkers rig;
  // The responder sits on queue 0 of run port 1; the right worker drives queue 1.
  rig.right.open({0, 0, 0x10}, {1, 0, 0x20}, 49152);
  rig.left.open({0, 0, 0x10}, {1, 0, 0x20}, 49152);
  rig.left.post(0x10, 4096, {});
  rig.clock.run_until(1'000'000);
  // Data for a responder nobody opened is stale at the right worker's port.
  EXPECT_GT(rig.right.counters(1).stale_packets, 0u);
  EXPECT_TRUE(rig.right_events.remote_deliveries.empty());
}

// One half at a time, as the software RNIC opens a QP's responder at RTR and its requester at
// RTS: the same connection as open() makes, and refused where the worker does not drive the half.
TEST(Worker, OpensOneHalfAtATimeWhereItDrivesIt) {
  TwoWorkers rig;
  const HalfPlace requester{0, 0, 0x10};
  const HalfPlace responder{1, 1, 0x20};
  EXPECT_THROW(rig.left.open_responder(requester, responder, 49152), std::invalid_argument);
  EXPECT_THROW(rig.right.open_requester(requester, responder, 49152), std::invalid_argument);
  EXPECT_THROW(rig.right.open_responder(requester, {1, 0, 0x20}, 49152), std::invalid_argument);
  rig.right.open_responder(requester, responder, 49152);
  rig.left.open_requester(requester, responder, 49152);
  EXPECT_THROW(rig.left.open_requester(requester, responder, 49152), std::invalid_argument);
  rig.send_across(2 * 4096);
}

TEST(Worker, PacedRatesLandOnTheirRunPorts) {
  TwoWorkers rig;
  rig.left.open({0, 0, 0x10}, {1, 1, 0x20}, 49152);
  rig.left.post(0x10, 1 << 20, {});
  std::vector<double> rates(3, 0.0);
  rig.left.add_paced_rates(rates);
  rig.right.add_paced_rates(rates);
  EXPECT_EQ(rates[0], static_cast<double>(k100G));
  EXPECT_EQ(rates[1], 0.0);
  EXPECT_EQ(rates[2], 0.0);
}

}  // namespace
}  // namespace etwire::dataplane

// RED/ECN marking at the switch egress (spec 3.8): none below Kmin, all ECN-capable packets above
// Kmax, about Pmax-proportional in between, never a Not-ECT packet; decided on the depth ahead of
// a packet as it joins the queue or on the depth behind it as it leaves. The queue comes from a
// 100 Gb/s sender into a 25 Gb/s receiver: packets arrive every 80 ns and leave every 320 ns.
#include <gtest/gtest.h>

#include "clock/line_rate.h"
#include "clock/virtual_clock.h"
#include "tests/twin/nic_driver.h"
#include "twin/fabric/fabric_twin.h"

namespace etwire::twin::testing {
namespace {

using clock::Nanos;

struct MarkingRun {
  std::vector<Delivery> received;
  uint64_t port_marks = 0;
  uint64_t queue_marks = 0;
};

MarkingRun run_into_slow_port(uint64_t kmin, uint64_t kmax, double pmax, uint8_t codepoint,
                              uint32_t packets, const config::FabricPortOverride* slow = nullptr,
                              config::EcnMarkPoint mark_at = config::EcnMarkPoint::kEnqueue,
                              double average_weight = 1) {
  config::FabricConfig config = quiet_fabric();
  config.ecn.enabled = true;
  config.ecn.kmin_bytes = kmin;
  config.ecn.kmax_bytes = kmax;
  config.ecn.pmax = pmax;
  config.ecn.mark_at = mark_at;
  config.ecn.average_weight = average_weight;
  if (slow != nullptr) config.port_overrides.push_back(*slow);
  clock::VirtualClock clock;
  std::vector<TwinPortSpec> ports{{"fast", k100G}, {"slow", k25G}};
  FabricTwin twin(config, ports, clock, 1);
  NicDriver driver(twin, clock);
  for (uint32_t i = 0; i < packets; ++i) driver.send(data_packet(0, 1, 1000, i, 0, codepoint));
  clock.run_until(clock::kNever);
  return {driver.data_received_by(1), twin.switch_port_counters(1).ecn_marked,
          twin.queue(1, 0).ecn_marked};
}

size_t count_ce(const std::vector<Delivery>& received) {
  size_t marked = 0;
  for (const Delivery& d : received) marked += d.packet.ecn == nic::ecn::kCe;
  return marked;
}

TEST(FabricTwinEcn, NothingIsMarkedBelowKmin) {
  const MarkingRun run = run_into_slow_port(1 << 30, 1 << 30, 1.0, nic::ecn::kEct0, 200);
  ASSERT_EQ(run.received.size(), 200u);
  EXPECT_EQ(count_ce(run.received), 0u);
  EXPECT_EQ(run.port_marks, 0u);
}

TEST(FabricTwinEcn, EveryEcnCapablePacketAboveKmaxIsMarked) {
  for (uint8_t codepoint : {nic::ecn::kEct0, nic::ecn::kEct1}) {
    const MarkingRun run = run_into_slow_port(0, 1, 0.0, codepoint, 200);
    ASSERT_EQ(run.received.size(), 200u);
    // Packet 0 finds the port idle; packet 1 finds only packet 0, which is on the wire and no
    // longer counts as queued. Every later packet finds at least 1000 B waiting: above Kmax.
    EXPECT_EQ(run.received[0].packet.ecn, codepoint);
    EXPECT_EQ(run.received[1].packet.ecn, codepoint);
    for (size_t i = 2; i < run.received.size(); ++i) {
      EXPECT_EQ(run.received[i].packet.ecn, nic::ecn::kCe) << "packet " << i;
    }
    EXPECT_EQ(run.port_marks, 198u);
    EXPECT_EQ(run.queue_marks, 198u);
  }
}

TEST(FabricTwinEcn, NotEctAndAlreadyMarkedPacketsAreNeverCounted) {
  const MarkingRun not_ect = run_into_slow_port(0, 1, 1.0, nic::ecn::kNotEct, 200);
  EXPECT_EQ(count_ce(not_ect.received), 0u);
  EXPECT_EQ(not_ect.port_marks, 0u);
  const MarkingRun already = run_into_slow_port(0, 1, 1.0, nic::ecn::kCe, 200);
  EXPECT_EQ(count_ce(already.received), 200u);  // CE stays CE
  EXPECT_EQ(already.port_marks, 0u);            // but the switch did not mark it
}

TEST(FabricTwinEcn, BetweenThresholdsMarksInProportionToPmax) {
  // The queue grows by 3 packets per 4 arrivals: packet k finds about 750 k bytes waiting. With
  // Kmin 0 and Kmax above the peak, p(k) = Pmax x 750 k / Kmax, so over 400 packets the expected
  // marks are Pmax x 750 x (0 + ... + 399) / 300'000 = Pmax x 199.5.
  constexpr uint64_t kKmax = 300'000;
  const MarkingRun full = run_into_slow_port(0, kKmax, 1.0, nic::ecn::kEct0, 400);
  const MarkingRun half = run_into_slow_port(0, kKmax, 0.5, nic::ecn::kEct0, 400);
  EXPECT_NEAR(static_cast<double>(count_ce(full.received)), 199.5, 30);
  EXPECT_NEAR(static_cast<double>(count_ce(half.received)), 99.75, 25);
  EXPECT_EQ(full.port_marks, count_ce(full.received));
}

TEST(FabricTwinEcn, OnDequeueThePacketsWithABacklogBehindThemAreMarked) {
  const MarkingRun run =
      run_into_slow_port(0, 1, 0.0, nic::ecn::kEct0, 200, nullptr, config::EcnMarkPoint::kDequeue);
  ASSERT_EQ(run.received.size(), 200u);
  // Packet 0 leaves before packet 1 arrives: nothing behind it. Packet 1 leaves 320 ns later
  // with packets 2 and 3 behind it, and so on, until packet 199 leaves an empty queue.
  EXPECT_EQ(run.received[0].packet.ecn, nic::ecn::kEct0);
  for (size_t i = 1; i + 1 < run.received.size(); ++i) {
    EXPECT_EQ(run.received[i].packet.ecn, nic::ecn::kCe) << "packet " << i;
  }
  EXPECT_EQ(run.received[199].packet.ecn, nic::ecn::kEct0);
  EXPECT_EQ(run.port_marks, 198u);
  EXPECT_EQ(run.queue_marks, 198u);
}

Nanos first_mark_delivered(const MarkingRun& run) {
  for (const Delivery& d : run.received) {
    if (d.packet.ecn == nic::ecn::kCe) return d.at;
  }
  return clock::kNever;
}

TEST(FabricTwinEcn, OnDequeueTheFirstMarkArrivesADrainTimeEarlier) {
  // Above Kmin = 100 kB every packet is marked. The queue grows by 750 B per 80 ns, so it passes
  // 100 kB about 10.7 us in. On enqueue the first marked packet then waits behind 100 kB, which
  // the 25G port drains in 32 us; on dequeue the packet leaving at that moment carries the mark.
  constexpr uint64_t kKmin = 100'000;
  const MarkingRun enqueue = run_into_slow_port(kKmin, kKmin, 1.0, nic::ecn::kEct0, 400);
  const MarkingRun dequeue = run_into_slow_port(kKmin, kKmin, 1.0, nic::ecn::kEct0, 400, nullptr,
                                                config::EcnMarkPoint::kDequeue);
  const Nanos drain = clock::LineRateTimer::duration(kKmin, k25G);
  const Nanos enqueue_first = first_mark_delivered(enqueue);
  const Nanos dequeue_first = first_mark_delivered(dequeue);
  ASSERT_NE(dequeue_first, clock::kNever);
  ASSERT_NE(enqueue_first, clock::kNever);
  EXPECT_NEAR(static_cast<double>(enqueue_first - dequeue_first), static_cast<double>(drain),
              1'000);
}

TEST(FabricTwinEcn, PortOverrideSetsTheMarkingOfTheQueueTowardThatPort) {
  config::FabricPortOverride slow;
  slow.port = "slow";
  slow.propagation_delay_ns = 1000;
  slow.ecn.enabled = false;
  const MarkingRun off = run_into_slow_port(0, 1, 1.0, nic::ecn::kEct0, 200, &slow);
  EXPECT_EQ(count_ce(off.received), 0u);
  slow.ecn.enabled = true;
  slow.ecn.kmin_bytes = 1 << 30;  // the fabric-wide setting marks everything; this port nothing
  slow.ecn.kmax_bytes = 1 << 30;
  const MarkingRun high = run_into_slow_port(0, 1, 1.0, nic::ecn::kEct0, 200, &slow);
  EXPECT_EQ(count_ce(high.received), 0u);
}

size_t first_marked(const MarkingRun& run) {
  for (size_t i = 0; i < run.received.size(); ++i) {
    if (run.received[i].packet.ecn == nic::ecn::kCe) return i;
  }
  return run.received.size();
}

TEST(FabricTwinEcn, RedsAverageMarksABuildingQueueOnlyOnceItHasLasted) {
  // Every packet above 100 kB is marked. Packet k finds about 750 k bytes: the depth itself
  // passes 100 kB at packet 134; RED's average with w = 0.002 lags it, w sum_j (1-w)^(k-j) 750 j
  // = 750 (k - (1 - (1-w)^k) / w), and passes 100 kB only at packet 416 (at 400 it is 93.4 kB).
  const auto run = [](double weight, uint32_t packets) {
    return run_into_slow_port(100'000, 100'000, 1.0, nic::ecn::kEct0, packets, nullptr,
                              config::EcnMarkPoint::kEnqueue, weight);
  };
  const MarkingRun depth = run(1, 400);
  const MarkingRun averaged = run(0.002, 400);
  EXPECT_NEAR(static_cast<double>(first_marked(depth)), 134, 3);
  EXPECT_EQ(count_ce(averaged.received), 0u);
  const MarkingRun longer = run(0.002, 600);
  EXPECT_NEAR(static_cast<double>(first_marked(longer)), 416, 3);
  // Once above, the average keeps climbing with the queue: every later packet is marked.
  EXPECT_EQ(count_ce(longer.received), longer.received.size() - first_marked(longer));
}

}  // namespace
}  // namespace etwire::twin::testing

// Switches that spread packets (fabric.load_balancing): adaptive routing takes two flows that
// ECMP puts on one uplink apart, a flowlet keeps its link within the gap and moves after it,
// spraying deals packets in the configured order, every mode is a function of its seed, and
// every mode routes around a dead link.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>

#include "clock/virtual_clock.h"
#include "tests/twin/nic_driver.h"
#include "twin/fabric/fabric_twin.h"
#include "twin/layout/ecmp_hash.h"

namespace etwire::twin::testing {
namespace {

using config::LoadBalancing;

constexpr uint32_t kFrame = 1000;  // wire bytes: 80 ns at 100G

// Leaf-spine without oversubscription: ports_per_leaf hosts per leaf, as many spines, every link
// at 100G; every tier in `mode`.
config::FabricConfig fabric(uint32_t ports_per_leaf, LoadBalancing mode) {
  config::FabricConfig config = quiet_fabric();
  config.topology = config::Topology::kLeafSpine;
  config.leaf_spine.ports_per_leaf = ports_per_leaf;
  config.leaf_spine.spines = ports_per_leaf;
  config.load_balancing.leaf = config.load_balancing.spine = mode;
  return config;
}

// A UDP source port (from 49152 on) for which ECMP sends `src` -> `dst` up leaf0's uplink to
// `spine`.
uint16_t source_port_onto(const FabricLayout& layout, uint32_t src, uint32_t dst, size_t spine) {
  for (uint32_t port = 49152; port < 65536; ++port) {
    const auto udp = static_cast<uint16_t>(port);
    if (layout.egress_port(layout.leaf_switch(0),
                           data_packet(src, dst, kFrame, 0, 0, nic::ecn::kNotEct, udp)) ==
        layout.uplink_port(0, spine)) {
      return udp;
    }
  }
  ADD_FAILURE() << "no source port hashes onto spine " << spine;
  return 0;
}

// `count` packets from `src` to `dst`, back to back from `start`, PSNs from `first_psn`.
void burst(NicDriver& driver, uint32_t src, uint32_t dst, uint32_t count, clock::Nanos start,
           uint16_t udp, uint32_t first_psn = 0) {
  for (uint32_t i = 0; i < count; ++i) {
    driver.send(data_packet(src, dst, kFrame, first_psn + i, 0, nic::ecn::kNotEct, udp), start);
  }
}

uint64_t uplink_tx(const FabricTwin& twin, size_t leaf, size_t spine) {
  return twin.switch_port_counters(twin.layout().uplink_port(leaf, spine)).tx_packets;
}

clock::Nanos last_delivery(const NicDriver& driver) {
  clock::Nanos last = 0;
  for (const Delivery& d : driver.deliveries()) last = std::max(last, d.at);
  return last;
}

// Flows 0 -> 2 and 1 -> 3 (leaf0 to leaf1), `packets` each from time 0, both hashed onto
// leaf0's uplink to spine 0; `both` false: the first flow alone. The last delivery's time.
clock::Nanos collide(LoadBalancing mode, uint32_t packets, bool both,
                     std::array<uint64_t, 2>* uplinks = nullptr) {
  clock::VirtualClock clock;
  const auto ports = uniform_ports(4);
  FabricTwin twin(fabric(2, mode), ports, clock, 1);
  NicDriver driver(twin, clock);
  burst(driver, 0, 2, packets, 0, source_port_onto(twin.layout(), 0, 2, 0));
  if (both) burst(driver, 1, 3, packets, 0, source_port_onto(twin.layout(), 1, 3, 0));
  clock.run_until(clock::kNever);
  EXPECT_EQ(driver.data_received_by(2).size(), packets);
  EXPECT_EQ(driver.data_received_by(3).size(), both ? packets : 0u);
  if (uplinks != nullptr) *uplinks = {uplink_tx(twin, 0, 0), uplink_tx(twin, 0, 1)};
  return last_delivery(driver);
}

TEST(FabricTwinLoadBalancing, AdaptiveRoutingTakesTwoCollidingFlowsApart) {
  constexpr uint32_t kPackets = 200;
  const clock::Nanos alone = collide(LoadBalancing::kEcmp, kPackets, false);
  std::array<uint64_t, 2> uplinks{};
  // ECMP: both flows share one uplink, so the pair takes twice as long as one flow.
  const clock::Nanos ecmp = collide(LoadBalancing::kEcmp, kPackets, true, &uplinks);
  EXPECT_EQ(uplinks, (std::array<uint64_t, 2>{2 * kPackets, 0}));
  EXPECT_GE(ecmp, alone + (kPackets - 1) * 80);
  // Adaptive: the second flow's packets go where the queue is shorter; the pair ends within two
  // frame times of one flow alone.
  const clock::Nanos adaptive = collide(LoadBalancing::kAdaptive, kPackets, true, &uplinks);
  EXPECT_LE(adaptive, alone + 2 * 80);
  EXPECT_EQ(uplinks[0] + uplinks[1], 2 * kPackets);
  EXPECT_GE(std::min(uplinks[0], uplinks[1]), kPackets - 2);
}

TEST(FabricTwinLoadBalancing, AdaptiveBiasKeepsTheHashedLinkUntilItsQueueIsThatMuchLonger) {
  clock::VirtualClock clock;
  const auto ports = uniform_ports(4);
  config::FabricConfig config = fabric(2, LoadBalancing::kAdaptive);
  // Two flows at line rate into one uplink queue a frame per two frames sent: with a bias of
  // 10 frames the hashed link holds until its queue is past 10 frames.
  config.load_balancing.adaptive_bias_bytes = 10 * kFrame;
  FabricTwin twin(config, ports, clock, 1);
  NicDriver driver(twin, clock);
  burst(driver, 0, 2, 100, 0, source_port_onto(twin.layout(), 0, 2, 0));
  burst(driver, 1, 3, 100, 0, source_port_onto(twin.layout(), 1, 3, 0));
  clock.run_until(clock::kNever);
  EXPECT_EQ(driver.deliveries().size(), 200u);
  // The queue grows by a frame for every two that arrive, so it reaches the bias once each flow
  // has sent about ten; from then on the spine-1 uplink takes what would push it further.
  EXPECT_GT(uplink_tx(twin, 0, 1), 0u);
  EXPECT_LT(uplink_tx(twin, 0, 1), 100u);
  EXPECT_GE(uplink_tx(twin, 0, 0), 100u);
}

TEST(FabricTwinLoadBalancing, FlowletKeepsItsLinkWithinTheGapAndMovesAfterALongerOne) {
  clock::VirtualClock clock;
  const auto ports = uniform_ports(4);
  config::FabricConfig config = fabric(2, LoadBalancing::kFlowlet);
  config.load_balancing.flowlet_gap_ns = 2'000;
  FabricTwin twin(config, ports, clock, 1);
  NicDriver driver(twin, clock);
  const FabricLayout& layout = twin.layout();
  const uint16_t a = source_port_onto(layout, 0, 2, 0);
  const uint16_t b = source_port_onto(layout, 1, 3, 0);
  // The two flows keep flowsets of their own.
  const uint64_t seed = layout.switch_info(layout.leaf_switch(0)).ecmp_seed;
  const auto flowset = [&](uint32_t src, uint32_t dst, uint16_t udp) {
    return ecmp_hash(data_packet(src, dst, kFrame, 0, 0, nic::ecn::kNotEct, udp),
                     config::EcmpHash::kFiveTuple, seed) &
           (LoadBalancer::kFlowsets - 1);
  };
  ASSERT_NE(flowset(0, 2, a), flowset(1, 3, b));
  // Flow b: 300 frames from 0 (24 us at line rate), never pausing. Flow a: 50 frames from 0,
  // then, after 6 us of silence, 50 more. Both start on the hashed uplink (equal queues), where
  // the pair builds a queue that flow a's first flowlet does not escape: its frames are 80 ns
  // apart. Its second flowlet finds that queue still there and takes the other uplink.
  burst(driver, 1, 3, 300, 0, b);
  burst(driver, 0, 2, 50, 0, a);
  burst(driver, 0, 2, 50, 50 * 80 + 6'000, a, 50);
  clock.run_until(clock::kNever);
  EXPECT_EQ(driver.deliveries().size(), 400u);
  EXPECT_EQ(uplink_tx(twin, 0, 0), 350u);
  EXPECT_EQ(uplink_tx(twin, 0, 1), 50u);
}

TEST(FabricTwinLoadBalancing, RoundRobinSprayDealsPacketsToTheLinksInTurn) {
  clock::VirtualClock clock;
  const auto ports = uniform_ports(8);
  config::FabricConfig config = fabric(4, LoadBalancing::kSpray);
  config.load_balancing.spray = config::SprayOrder::kRoundRobin;
  FabricTwin twin(config, ports, clock, 1);
  NicDriver driver(twin, clock);
  // One flow, one packet at a time: each leaves by the next of leaf0's four uplinks.
  for (uint32_t i = 0; i < 8; ++i) {
    driver.send(data_packet(0, 4, kFrame, i), clock::Nanos{i} * 10'000);
    clock.run_until(clock::Nanos{i + 1} * 10'000 - 1);
    for (uint32_t spine = 0; spine < 4; ++spine) {
      EXPECT_EQ(uplink_tx(twin, 0, spine), i / 4 + (spine <= i % 4 ? 1u : 0u))
          << "packet " << i << ", spine " << spine;
    }
  }
}

// One flow of `packets` frames, one UDP source port unless `vary_port`, over four spines: the
// frames each of leaf0's uplinks carried.
std::array<uint64_t, 4> spray_one_flow(config::SprayOrder order, uint64_t seed, uint32_t packets,
                                       bool vary_port) {
  clock::VirtualClock clock;
  const auto ports = uniform_ports(8);
  config::FabricConfig config = fabric(4, LoadBalancing::kSpray);
  config.load_balancing.spray = order;
  FabricTwin twin(config, ports, clock, seed);
  NicDriver driver(twin, clock);
  for (uint32_t i = 0; i < packets; ++i) {
    const auto udp = static_cast<uint16_t>(vary_port ? 49152 + i : 49152);
    driver.send(data_packet(0, 4, kFrame, i, 0, nic::ecn::kNotEct, udp));
  }
  clock.run_until(clock::kNever);
  EXPECT_EQ(driver.data_received_by(4).size(), packets);
  return {uplink_tx(twin, 0, 0), uplink_tx(twin, 0, 1), uplink_tx(twin, 0, 2),
          uplink_tx(twin, 0, 3)};
}

TEST(FabricTwinLoadBalancing, RandomSpraySpreadsOneFlowAsItsSeedDraws) {
  const auto first = spray_one_flow(config::SprayOrder::kRandom, 1, 400, false);
  for (const uint64_t packets : first) {
    EXPECT_GT(packets, 60u);
    EXPECT_LT(packets, 140u);
  }
  EXPECT_EQ(spray_one_flow(config::SprayOrder::kRandom, 1, 400, false), first);
  EXPECT_NE(spray_one_flow(config::SprayOrder::kRandom, 2, 400, false), first);
}

TEST(FabricTwinLoadBalancing, EntropySprayFollowsThePacketsSourcePort) {
  // One source port: one link, whatever the spray.
  auto per_link = spray_one_flow(config::SprayOrder::kEntropy, 1, 100, false);
  std::sort(per_link.begin(), per_link.end());
  EXPECT_EQ(per_link, (std::array<uint64_t, 4>{0, 0, 0, 100}));
  // A source port per packet (the sender's entropy): every link.
  for (const uint64_t packets : spray_one_flow(config::SprayOrder::kEntropy, 1, 400, true)) {
    EXPECT_GT(packets, 60u);
  }
}

// Flows both ways between the leaves, each packet its own source port, with leaf0's uplink to
// spine 0 down (known to routing) before they start: every delivery, in order of arrival.
std::vector<Delivery> around_a_dead_link(LoadBalancing mode, uint64_t* dead_link_packets) {
  clock::VirtualClock clock;
  const auto ports = uniform_ports(4);
  FabricTwin twin(fabric(2, mode), ports, clock, 7);
  NicDriver driver(twin, clock);
  twin.schedule_link_fault(twin.layout().uplink_cable(0, 0), false, 1'000, 1'000);
  for (uint32_t i = 0; i < 200; ++i) {
    const auto udp = static_cast<uint16_t>(49152 + i);
    driver.send(data_packet(0, 2, kFrame, i, 0, nic::ecn::kNotEct, udp), 10'000);
    driver.send(data_packet(3, 1, kFrame, i, 0, nic::ecn::kNotEct, udp), 10'000);
  }
  clock.run_until(clock::kNever);
  const FabricLayout& layout = twin.layout();
  *dead_link_packets =
      uplink_tx(twin, 0, 0) + twin.switch_port_counters(layout.spine_port(0, 0)).tx_packets;
  return driver.deliveries();
}

TEST(FabricTwinLoadBalancing, EveryModeRoutesAroundADeadLinkTheSameWayEachRun) {
  for (const LoadBalancing mode : {LoadBalancing::kEcmp, LoadBalancing::kSpray,
                                   LoadBalancing::kFlowlet, LoadBalancing::kAdaptive}) {
    SCOPED_TRACE(config::load_balancing_name(mode));
    uint64_t dead = 0;
    const std::vector<Delivery> first = around_a_dead_link(mode, &dead);
    EXPECT_EQ(first.size(), 400u);
    EXPECT_EQ(dead, 0u);
    EXPECT_EQ(around_a_dead_link(mode, &dead), first);
  }
}

}  // namespace
}  // namespace etwire::twin::testing

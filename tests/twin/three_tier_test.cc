// Three-tier Clos: pods of leaves and spines joined by super-spines. Traffic within a leaf or a
// pod never reaches a super-spine, traffic between pods crosses exactly one, every hop is timed
// exactly, ECMP spreads flows over the super-spines and keeps each on one, and the super-spine
// links' speed follows from the spine tier's oversubscription.
#include <gtest/gtest.h>

#include <algorithm>

#include "clock/virtual_clock.h"
#include "tests/twin/nic_driver.h"
#include "twin/fabric/fabric_twin.h"

namespace etwire::twin::testing {
namespace {

// 2 ports per leaf, 2 leaves and 2 spines per pod, 2 super-spines per spine's group.
config::FabricConfig three_tier(double spine_oversubscription = 1.0) {
  config::FabricConfig config = quiet_fabric();
  config.topology = config::Topology::kThreeTier;
  config.leaf_spine.ports_per_leaf = 2;
  config.leaf_spine.spines = 2;
  config.three_tier.leaves_per_pod = 2;
  config.three_tier.super_spines = 2;
  config.three_tier.oversubscription = spine_oversubscription;
  return config;
}

// Packets every super-spine received, by super-spine number.
std::vector<uint64_t> super_spine_packets(const FabricTwin& twin) {
  const FabricLayout& layout = twin.layout();
  const size_t supers = layout.spines() * layout.planes() * layout.super_spines();
  std::vector<uint64_t> packets(supers, 0);
  for (size_t super = 0; super < supers; ++super) {
    for (size_t pod = 0; pod < layout.pods(); ++pod) {
      packets[super] += twin.switch_port_counters(layout.super_spine_port(super, pod)).rx_packets;
    }
  }
  return packets;
}

uint64_t total(const std::vector<uint64_t>& counts) {
  uint64_t sum = 0;
  for (uint64_t c : counts) sum += c;
  return sum;
}

TEST(FabricTwinThreeTier, LayoutHasPodsAndSuperSpineGroups) {
  const auto ports = uniform_ports(8);
  const FabricLayout layout(three_tier(), ports);
  EXPECT_EQ(layout.leaves(), 4u);
  EXPECT_EQ(layout.pods(), 2u);
  EXPECT_EQ(layout.spines(), 2u);
  EXPECT_EQ(layout.super_spines(), 2u);
  // 4 leaves, 4 spines (2 per pod), 4 super-spines (2 per spine group).
  ASSERT_EQ(layout.switches(), 12u);
  EXPECT_EQ(layout.switch_info(layout.spine_switch(2)).name, "spine2");
  EXPECT_EQ(layout.switch_info(layout.spine_switch(2)).pod, 1u);
  EXPECT_EQ(layout.switch_info(layout.super_spine_switch(3)).name, "super3");
  // A spine: one port per leaf of its pod, one per super-spine of its group.
  EXPECT_EQ(layout.switch_info(layout.spine_switch(2)).ports, 2u + 2u);
  // A super-spine: one port per pod.
  EXPECT_EQ(layout.switch_info(layout.super_spine_switch(0)).ports, 2u);
  EXPECT_EQ(layout.switch_port(layout.spine_port(2, 3)).name, "spine2/leaf3");
  // Spine 3 is spine 1 of pod 1: its group is super-spines 2 and 3.
  EXPECT_EQ(layout.switch_port(layout.spine_uplink_port(3, 1)).name, "spine3/super3");
  EXPECT_EQ(layout.switch_port(layout.super_spine_port(3, 1)).name, "super3/spine3");
  EXPECT_EQ(layout.switch_port(layout.super_spine_port(2, 0)).name, "super2/spine1");
  // Cables: 8 hosts, 4 leaves x 2 spines, 4 spines x 2 super-spines.
  EXPECT_EQ(layout.cables(), 8u + 8u + 8u);
  // 1:1 at both tiers: 2 x 100G per leaf over 2 spines, 2 x 100G per spine over 2 super-spines.
  EXPECT_EQ(layout.uplink_speed_bps(), k100G);
  EXPECT_EQ(layout.spine_uplink_speed_bps(), k100G);
  EXPECT_EQ(layout.switches_between(0, 1), 1u);
  EXPECT_EQ(layout.switches_between(0, 3), 3u);
  EXPECT_EQ(layout.switches_between(0, 7), 5u);
}

// Pods hold leaves_per_pod consecutive leaves; only the last may hold fewer.
TEST(FabricTwinThreeTier, PodsHoldLeavesPerPodLeavesAndTheLastTheRest) {
  config::FabricConfig config = three_tier();
  config.three_tier.leaves_per_pod = 4;
  const auto ports = uniform_ports(18);  // 9 leaves of 2: pods of 4, 4 and 1
  const FabricLayout layout(config, ports);
  EXPECT_EQ(layout.pods(), 3u);
  EXPECT_EQ(layout.switch_info(layout.leaf_switch(3)).pod, 0u);
  EXPECT_EQ(layout.switch_info(layout.leaf_switch(4)).pod, 1u);
  EXPECT_EQ(layout.switch_info(layout.leaf_switch(8)).pod, 2u);
  EXPECT_EQ(layout.switches_between(0, 7), 3u);  // leaves 0 and 3: one pod
  EXPECT_EQ(layout.switches_between(0, 8), 5u);  // leaves 0 and 4
  // A spine of the first pod has a port per leaf of it; one of the last pod, one.
  EXPECT_EQ(layout.switch_info(layout.spine_switch(0)).down_ports, 4u);
  EXPECT_EQ(layout.switch_info(layout.spine_switch(4)).down_ports, 1u);
}

TEST(FabricTwinThreeTier, OneFlowTimingsOnEveryPathLength) {
  const auto ports = uniform_ports(8);
  struct Case {
    uint32_t dst;
    uint32_t links;
    uint32_t switches;
  };
  // Same leaf; another leaf of the pod; another pod.
  for (const Case c : {Case{1, 2, 1}, Case{3, 4, 3}, Case{6, 6, 5}}) {
    clock::VirtualClock clock;
    FabricTwin twin(three_tier(), ports, clock, 1);
    NicDriver driver(twin, clock);
    driver.send(data_packet(0, c.dst, 1000, 0));
    clock.run_until(clock::kNever);
    ASSERT_EQ(driver.data_received_by(c.dst).size(), 1u) << "to host " << c.dst;
    // Every link at 100G: 80 ns for 1000 bytes, 1 us propagation; 500 ns per switch.
    EXPECT_EQ(driver.data_received_by(c.dst)[0].at, c.links * (80 + 1000) + c.switches * 500)
        << "to host " << c.dst;
    EXPECT_EQ(total(super_spine_packets(twin)), c.switches == 5 ? 1u : 0u) << "to host " << c.dst;
  }
}

TEST(FabricTwinThreeTier, SpineTierOversubscriptionSlowsOnlyTheSuperSpineLinks) {
  const auto ports = uniform_ports(8);
  clock::VirtualClock clock;
  // 2:1 at the spine tier: 200G down per spine over 2 super-spines -> 50G links.
  FabricTwin twin(three_tier(2.0), ports, clock, 1);
  EXPECT_EQ(twin.layout().uplink_speed_bps(), k100G);
  EXPECT_EQ(twin.layout().spine_uplink_speed_bps(), 50'000'000'000u);
  NicDriver driver(twin, clock);
  driver.send(data_packet(0, 7, 1000, 0));
  clock.run_until(clock::kNever);
  ASSERT_EQ(driver.data_received_by(7).size(), 1u);
  // Four 100G links (80 ns each) and two 50G links (160 ns each).
  EXPECT_EQ(driver.data_received_by(7)[0].at, 4 * 80 + 2 * 160 + 6 * 1000 + 5 * 500);
}

TEST(FabricTwinThreeTier, EcmpSpreadsFlowsOverSuperSpinesAndKeepsEachOnOne) {
  const auto ports = uniform_ports(8);
  clock::VirtualClock clock;
  FabricTwin twin(three_tier(), ports, clock, 1);
  NicDriver driver(twin, clock);
  for (uint32_t flow = 0; flow < 400; ++flow) {
    driver.send(
        data_packet(0, 6, 1000, flow, 0, nic::ecn::kNotEct, static_cast<uint16_t>(49152 + flow)));
  }
  clock.run_until(clock::kNever);
  EXPECT_EQ(driver.data_received_by(6).size(), 400u);
  for (uint64_t count : super_spine_packets(twin)) {
    EXPECT_GT(count, 400u / 4 / 2);  // a fair share of 4 paths, within a factor of 2
    EXPECT_LT(count, 400u / 4 * 2);
  }

  FabricTwin pinned_twin(three_tier(), ports, clock, 1);
  NicDriver pinned(pinned_twin, clock);
  for (uint32_t i = 0; i < 50; ++i)
    pinned.send(data_packet(0, 6, 1000, i, 0, nic::ecn::kNotEct, 50000));
  clock.run_until(clock::kNever);
  auto counts = super_spine_packets(pinned_twin);
  std::sort(counts.begin(), counts.end());
  EXPECT_EQ(counts, (std::vector<uint64_t>{0, 0, 0, 50}));
}

}  // namespace
}  // namespace etwire::twin::testing

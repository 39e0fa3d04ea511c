// Rail-optimized wiring: NIC i of every server of a group attaches to rail leaf i, so traffic
// between servers on one rail crosses one switch and traffic between rails crosses a spine. With
// planes, each plane is a network of its own: traffic between planes is dropped and counted.
#include <gtest/gtest.h>

#include "clock/virtual_clock.h"
#include "tests/twin/nic_driver.h"
#include "twin/fabric/fabric_twin.h"

namespace etwire::twin::testing {
namespace {

// Servers of 4 NICs, 2 servers per rail group, 2 spines (per plane).
config::FabricConfig rails(uint32_t planes = 1) {
  config::FabricConfig config = quiet_fabric();
  config.topology = config::Topology::kLeafSpine;
  config.leaf_spine.ports_per_leaf = 2;
  config.leaf_spine.spines = 2;
  config.rails.nics_per_host = 4;
  config.rails.planes = planes;
  return config;
}

TEST(FabricTwinRails, NicIOfEveryServerIsOnRailLeafI) {
  const auto ports = uniform_ports(16);  // 4 servers: 2 groups of 2
  const FabricLayout layout(rails(), ports);
  ASSERT_EQ(layout.leaves(), 8u);
  // Server 1's NIC 2 (host 6): rail leaf 2 of group 0, at the server's place in the group.
  EXPECT_EQ(layout.switch_port(layout.host_switch_port(6)).name, "leaf2/nic6");
  EXPECT_EQ(layout.switch_port(layout.host_switch_port(2)).name, "leaf2/nic2");
  // Server 2 (group 1), NIC 3: leaf 4 + 3.
  EXPECT_EQ(layout.switch_port(layout.host_switch_port(11)).name, "leaf7/nic11");
  EXPECT_EQ(layout.switch_info(layout.leaf_switch(2)).down_ports, 2u);
  EXPECT_EQ(layout.switches_between(2, 6), 1u);   // one rail, one group
  EXPECT_EQ(layout.switches_between(2, 3), 3u);   // rails 2 and 3 of one server
  EXPECT_EQ(layout.switches_between(2, 10), 3u);  // rail 2 of both groups
  // 2 servers x 100G per rail leaf over 2 spines.
  EXPECT_EQ(layout.uplink_speed_bps(), k100G);
}

TEST(FabricTwinRails, OneFlowTimingsOnARailAndAcrossRails) {
  const auto ports = uniform_ports(8);
  struct Case {
    uint32_t dst;
    uint32_t links;
    uint32_t switches;
  };
  for (const Case c : {Case{5, 2, 1}, Case{6, 4, 3}}) {
    clock::VirtualClock clock;
    FabricTwin twin(rails(), ports, clock, 1);
    NicDriver driver(twin, clock);
    driver.send(data_packet(1, c.dst, 1000, 0));
    clock.run_until(clock::kNever);
    ASSERT_EQ(driver.data_received_by(c.dst).size(), 1u) << "to host " << c.dst;
    EXPECT_EQ(driver.data_received_by(c.dst)[0].at, c.links * (80 + 1000) + c.switches * 500)
        << "to host " << c.dst;
  }
}

TEST(FabricTwinRails, PlanesAreSeparateNetworks) {
  const auto ports = uniform_ports(8);
  const FabricLayout layout(rails(2), ports);
  // Rails 0 and 2 in plane 0, 1 and 3 in plane 1; 2 spines each.
  EXPECT_EQ(layout.planes(), 2u);
  EXPECT_EQ(layout.plane_of(2), 0u);
  EXPECT_EQ(layout.plane_of(7), 1u);
  EXPECT_EQ(layout.switches(), 4u + 4u);
  EXPECT_EQ(layout.switch_info(layout.spine_switch(3)).plane, 1u);
  EXPECT_EQ(layout.switch_port(layout.spine_port(3, 3)).name, "spine3/leaf3");
  EXPECT_THROW(layout.spine_port(3, 2), std::out_of_range);  // leaf 2 is in the other plane
  EXPECT_EQ(layout.switches_between(0, 2), 3u);
  EXPECT_EQ(layout.switches_between(0, 1), 0u);

  clock::VirtualClock clock;
  FabricTwin twin(rails(2), ports, clock, 1);
  NicDriver driver(twin, clock);
  driver.send(data_packet(0, 6, 1000, 0));  // rail 0 to rail 2: plane 0
  driver.send(data_packet(0, 1, 1000, 1));  // rail 0 to rail 1: no path
  clock.run_until(clock::kNever);
  EXPECT_EQ(driver.data_received_by(6).size(), 1u);
  EXPECT_EQ(driver.data_received_by(1).size(), 0u);
  const WireCounters& ingress = twin.switch_port_counters(layout.host_switch_port(0));
  EXPECT_EQ(ingress.drops_no_route, 1u);
  EXPECT_EQ(ingress.drops(), 1u);
}

TEST(FabricTwinRails, ThreeTierPodsHoldWholeRailGroups) {
  config::FabricConfig config = rails(2);
  config.topology = config::Topology::kThreeTier;
  config.three_tier.leaves_per_pod = 4;
  config.three_tier.super_spines = 1;
  const auto ports = uniform_ports(16);  // 2 groups of 2 servers: one pod each
  const FabricLayout layout(config, ports);
  EXPECT_EQ(layout.pods(), 2u);
  EXPECT_EQ(layout.switches_between(0, 8), 5u);  // rail 0 of both pods
  EXPECT_EQ(layout.switches_between(0, 4), 1u);  // rail 0, servers 0 and 1
  EXPECT_EQ(layout.switches_between(0, 9), 0u);  // rail 0 to rail 1: another plane

  clock::VirtualClock clock;
  FabricTwin twin(config, ports, clock, 1);
  NicDriver driver(twin, clock);
  driver.send(data_packet(2, 14, 1000, 0));  // rail 2, pod 0 to pod 1
  clock.run_until(clock::kNever);
  ASSERT_EQ(driver.data_received_by(14).size(), 1u);
  // A spine has 2 leaves of its plane in its pod (200G) and one super-spine: 200G links there.
  EXPECT_EQ(layout.spine_uplink_speed_bps(), 2 * k100G);
  EXPECT_EQ(driver.data_received_by(14)[0].at, 4 * 80 + 2 * 40 + 6 * 1000 + 5 * 500);

  config.three_tier.leaves_per_pod = 3;
  EXPECT_THROW(FabricLayout(config, ports), std::invalid_argument);
}

}  // namespace
}  // namespace etwire::twin::testing

// Two-tier leaf-spine: same-leaf traffic stays in the leaf, cross-leaf traffic crosses one spine
// picked by ECMP, one flow keeps one path, and the uplink speed follows from oversubscription.
#include <gtest/gtest.h>

#include <algorithm>
#include <set>

#include "clock/virtual_clock.h"
#include "nic/loopback/fabric_twin.h"
#include "tests/loopback/nic_driver.h"

namespace etwire::nic::loopback::testing {
namespace {

config::FabricConfig leaf_spine(uint32_t ports_per_leaf, uint32_t spines) {
  config::FabricConfig config = quiet_fabric();
  config.topology = config::Topology::kLeafSpine;
  config.leaf_spine.ports_per_leaf = ports_per_leaf;
  config.leaf_spine.spines = spines;
  config.leaf_spine.oversubscription = 1.0;
  config.leaf_spine.uplink_speed_bps = 0;
  return config;
}

// Packets each spine received from the leaves.
std::vector<uint64_t> spine_packets(const FabricTwin& twin) {
  const FabricLayout& layout = twin.layout();
  std::vector<uint64_t> per_spine(layout.spines(), 0);
  for (size_t spine = 0; spine < layout.spines(); ++spine) {
    for (size_t leaf = 0; leaf < layout.leaves(); ++leaf) {
      per_spine[spine] += twin.switch_port_counters(layout.spine_port(spine, leaf)).rx_packets;
    }
  }
  return per_spine;
}

TEST(FabricTwinLeafSpine, LayoutFollowsPortOrder) {
  clock::VirtualClock clock;
  const auto ports = uniform_ports(5);
  FabricTwin twin(leaf_spine(2, 3), ports, clock, 1);
  const FabricLayout& layout = twin.layout();
  ASSERT_EQ(layout.leaves(), 3u);  // the last leaf holds only host 4
  ASSERT_EQ(layout.spines(), 3u);
  ASSERT_EQ(layout.switches(), 6u);
  EXPECT_EQ(layout.switch_info(0).name, "leaf0");
  EXPECT_EQ(layout.switch_info(3).name, "spine0");
  EXPECT_EQ(layout.switch_info(2).ports, 1u + 3u);
  EXPECT_EQ(layout.switch_port(layout.host_switch_port(3)).name, "leaf1/nic3");
  EXPECT_EQ(layout.switch_port(layout.uplink_port(1, 2)).name, "leaf1/spine2");
  EXPECT_EQ(layout.switch_port(layout.spine_port(2, 1)).name, "spine2/leaf1");
  EXPECT_EQ(layout.cables(), 5u + 3u * 3u);
  EXPECT_EQ(layout.uplink_cable(1, 2), 5u + 1u * 3u + 2u);
  // 2 ports x 100G per leaf over 3 spines, no oversubscription: 66.67 Gb/s, rounded up.
  EXPECT_EQ(layout.uplink_speed_bps(), 66'666'666'667u);
}

TEST(FabricTwinLeafSpine, SameLeafTrafficStaysInTheLeaf) {
  clock::VirtualClock clock;
  const auto ports = uniform_ports(4);
  FabricTwin twin(leaf_spine(2, 2), ports, clock, 1);
  NicDriver driver(twin, clock);
  driver.send(data_packet(0, 1, 1000, 0));
  clock.run_until(clock::kNever);
  ASSERT_EQ(driver.data_received_by(1).size(), 1u);
  EXPECT_EQ(driver.data_received_by(1)[0].at, 80 + 1000 + 500 + 80 + 1000);
  EXPECT_EQ(spine_packets(twin), (std::vector<uint64_t>{0, 0}));
}

TEST(FabricTwinLeafSpine, CrossLeafTrafficCrossesOneSpine) {
  clock::VirtualClock clock;
  const auto ports = uniform_ports(4);
  FabricTwin twin(leaf_spine(2, 2), ports, clock, 1);
  NicDriver driver(twin, clock);
  driver.send(data_packet(0, 3, 1000, 0));
  clock.run_until(clock::kNever);
  ASSERT_EQ(driver.data_received_by(3).size(), 1u);
  // Four links at 100G (uplinks: 2 x 100G / 2 spines), four propagations, three switches.
  EXPECT_EQ(driver.data_received_by(3)[0].at, 4 * 80 + 4 * 1000 + 3 * 500);
  const auto per_spine = spine_packets(twin);
  EXPECT_EQ(per_spine[0] + per_spine[1], 1u);
}

TEST(FabricTwinLeafSpine, EcmpSpreadsSourcePortsAndKeepsAFlowOnOnePath) {
  clock::VirtualClock clock;
  const auto ports = uniform_ports(4);
  FabricTwin twin(leaf_spine(2, 4), ports, clock, 1);
  NicDriver driver(twin, clock);
  // 256 flows (UDP source ports), one packet each.
  for (uint32_t flow = 0; flow < 256; ++flow) {
    driver.send(
        data_packet(0, 2, 1000, flow, 0, ecn::kNotEct, static_cast<uint16_t>(49152 + flow)));
  }
  clock.run_until(clock::kNever);
  const auto spread = spine_packets(twin);
  for (uint64_t count : spread) {
    EXPECT_GT(count, 256u / 4 / 2);  // each spine carries a fair share, within a factor of 2
    EXPECT_LT(count, 256u / 4 * 2);
  }

  // One flow, many packets: one spine carries all of them.
  FabricTwin single_flow_twin(leaf_spine(2, 4), ports, clock, 1);
  NicDriver single_flow(single_flow_twin, clock);
  for (uint32_t i = 0; i < 100; ++i)
    single_flow.send(data_packet(0, 2, 1000, i, 0, ecn::kNotEct, 50000));
  clock.run_until(clock::kNever);
  auto pinned = spine_packets(single_flow_twin);
  std::sort(pinned.begin(), pinned.end());
  EXPECT_EQ(pinned, (std::vector<uint64_t>{0, 0, 0, 100}));
  EXPECT_EQ(single_flow.data_received_by(2).size(), 100u);
}

// Which spines carry traffic between every cross-leaf host pair with one UDP source port.
std::set<size_t> spines_used_by_all_pairs(config::EcmpHash hash) {
  config::FabricConfig config = leaf_spine(4, 4);
  config.leaf_spine.ecmp = hash;
  clock::VirtualClock clock;
  const auto ports = uniform_ports(8);
  FabricTwin twin(config, ports, clock, 1);
  NicDriver driver(twin, clock);
  for (uint32_t src = 0; src < 4; ++src) {
    for (uint32_t dst = 4; dst < 8; ++dst) driver.send(data_packet(src, dst, 1000, 0));
  }
  clock.run_until(clock::kNever);
  std::set<size_t> used;
  const auto per_spine = spine_packets(twin);
  for (size_t spine = 0; spine < per_spine.size(); ++spine) {
    if (per_spine[spine] > 0) used.insert(spine);
  }
  return used;
}

TEST(FabricTwinLeafSpine, FiveTupleHashSpreadsHostPairsThatShareASourcePort) {
  EXPECT_EQ(spines_used_by_all_pairs(config::EcmpHash::kUdpSourcePort).size(), 1u);
  EXPECT_GE(spines_used_by_all_pairs(config::EcmpHash::kFiveTuple).size(), 3u);
}

TEST(FabricTwinLeafSpine, OversubscriptionDerivesTheUplinkSpeed) {
  // 4 ports x 100G per leaf over 2 spines at 4:1 oversubscription: 50 Gb/s uplinks.
  config::FabricConfig config = leaf_spine(4, 2);
  config.leaf_spine.oversubscription = 4.0;
  clock::VirtualClock clock;
  const auto ports = uniform_ports(8);
  FabricTwin twin(config, ports, clock, 1);
  EXPECT_EQ(twin.layout().uplink_speed_bps(), 50'000'000'000u);
  NicDriver driver(twin, clock);
  driver.send(data_packet(0, 4, 1000, 0));
  clock.run_until(clock::kNever);
  ASSERT_EQ(driver.data_received_by(4).size(), 1u);
  // 80 ns on the host links, 160 ns on each 50G uplink.
  EXPECT_EQ(driver.data_received_by(4)[0].at, 80 + 160 + 160 + 80 + 4 * 1000 + 3 * 500);

  // A given uplink speed is used as it is.
  config.leaf_spine.uplink_speed_bps = 200'000'000'000;
  FabricTwin fast(config, ports, clock, 1);
  EXPECT_EQ(fast.layout().uplink_speed_bps(), 200'000'000'000u);
}

}  // namespace
}  // namespace etwire::nic::loopback::testing

// Two-tier leaf-spine: same-leaf traffic stays in the leaf, cross-leaf traffic crosses one spine
// picked by ECMP, one flow keeps one path, and the uplink speed follows from oversubscription.
#include <gtest/gtest.h>

#include <algorithm>
#include <set>

#include "clock/virtual_clock.h"
#include "tests/twin/nic_driver.h"
#include "twin/fabric/fabric_twin.h"
#include "twin/prng.h"

namespace etwire::twin::testing {
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
        data_packet(0, 2, 1000, flow, 0, nic::ecn::kNotEct, static_cast<uint16_t>(49152 + flow)));
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
    single_flow.send(data_packet(0, 2, 1000, i, 0, nic::ecn::kNotEct, 50000));
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

TEST(FabricTwinLeafSpine, ParallelLinksAreSeparateCablesAtTheirOwnSpeed) {
  config::FabricConfig config = leaf_spine(4, 2);
  config.leaf_spine.links = 2;
  clock::VirtualClock clock;
  const auto ports = uniform_ports(8);
  FabricTwin twin(config, ports, clock, 1);
  const FabricLayout& layout = twin.layout();
  ASSERT_EQ(layout.links(), 2u);
  EXPECT_EQ(layout.switch_info(0).ports, 4u + 2u * 2u);
  EXPECT_EQ(layout.switch_info(2).ports, 2u * 2u);  // spine0: two links to each of two leaves
  EXPECT_EQ(layout.switch_port(layout.uplink_port(1, 0, 1)).name, "leaf1/spine0:1");
  EXPECT_EQ(layout.switch_port(layout.spine_port(1, 0, 1)).name, "spine1/leaf0:1");
  EXPECT_EQ(layout.cables(), 8u + 2u * 2u * 2u);
  EXPECT_EQ(layout.uplink_cable(1, 1, 0), 8u + (1u * 2u + 1u) * 2u + 0u);
  EXPECT_EQ(layout.switch_port(layout.uplink_port(1, 1, 1)).peer.index, layout.spine_port(1, 1, 1));
  // 4 x 100G per leaf over 2 spines x 2 links: each link at the port speed.
  EXPECT_EQ(layout.uplink_speed_bps(), 100'000'000'000u);
  // One packet across: the same exact timing as one merged link of that speed.
  NicDriver driver(twin, clock);
  driver.send(data_packet(0, 6, 1000, 0));
  clock.run_until(clock::kNever);
  ASSERT_EQ(driver.data_received_by(6).size(), 1u);
  EXPECT_EQ(driver.data_received_by(6)[0].at, 4 * 80 + 4 * 1000 + 3 * 500);
}

// The uplink a leaf picks for `flows` flows (UDP source ports from a fixed sequence) between a
// host of leaf 0 and one of leaf 1: counts per uplink (spine x links + link).
std::vector<uint32_t> uplink_loads(const FabricLayout& layout, uint32_t flows,
                                   std::vector<uint32_t>* choice = nullptr) {
  const uint32_t first = layout.uplink_port(0, 0, 0);
  std::vector<uint32_t> loads(layout.spines() * layout.links(), 0);
  SplitMix64 ports(99);
  for (uint32_t f = 0; f < flows; ++f) {
    nic::Packet packet = data_packet(0, 5, 1000, 0, 0, nic::ecn::kNotEct,
                                     static_cast<uint16_t>(49152 + ports.next() % 16384));
    const uint32_t uplink = layout.egress_port(0, packet) - first;
    ++loads.at(uplink);
    if (choice != nullptr) choice->push_back(uplink);
  }
  return loads;
}

double chi_square(const std::vector<uint32_t>& loads, uint32_t balls) {
  const double expected = static_cast<double>(balls) / static_cast<double>(loads.size());
  double sum = 0;
  for (uint32_t load : loads) sum += (load - expected) * (load - expected) / expected;
  return sum;
}

// ECMP over 16 parallel uplinks (4 spines x 4 links) throws flows like balls into bins: the
// chi-square statistic of the per-link loads, averaged over 20 seeds, is near its expectation
// (bins - 1 = 15; each seed's standard deviation is sqrt(30), the mean's 1.2), and another seed
// moves a flow to another link with probability 15/16.
TEST(FabricTwinLeafSpine, EcmpOverParallelLinksIsBallsIntoBins) {
  const auto ports = uniform_ports(8);
  config::FabricConfig config = leaf_spine(4, 4);
  config.leaf_spine.links = 4;
  config.leaf_spine.ecmp = config::EcmpHash::kFiveTuple;
  constexpr uint32_t kFlows = 1000;
  double total = 0;
  std::vector<uint32_t> previous;
  double moved = 0;
  for (uint64_t seed = 1; seed <= 20; ++seed) {
    config.leaf_spine.ecmp_seed = seed;
    const FabricLayout layout(config, ports);
    std::vector<uint32_t> choice;
    total += chi_square(uplink_loads(layout, kFlows, &choice), kFlows);
    if (!previous.empty()) {
      for (uint32_t f = 0; f < kFlows; ++f) moved += choice[f] != previous[f] ? 1 : 0;
    }
    previous = choice;
  }
  const double mean = total / 20;
  EXPECT_GT(mean, 15 - 4 * 1.23) << mean;
  EXPECT_LT(mean, 15 + 4 * 1.23) << mean;
  const double moved_share = moved / (19.0 * kFlows);
  EXPECT_NEAR(moved_share, 15.0 / 16.0, 0.03);
}

// A spine picks among its parallel links to the destination leaf with a seed of its own: the
// flows that one leaf uplink brings are spread over the spine's links, not all sent down one.
TEST(FabricTwinLeafSpine, ASpineSpreadsOneUplinksFlowsOverItsLinks) {
  const auto ports = uniform_ports(8);
  config::FabricConfig config = leaf_spine(4, 2);
  config.leaf_spine.links = 4;
  const FabricLayout layout(config, ports);
  std::vector<uint32_t> choice;
  uplink_loads(layout, 4000, &choice);
  SplitMix64 again(99);
  std::vector<uint32_t> down(layout.links(), 0);
  uint32_t on_first_uplink = 0;
  for (uint32_t f = 0; f < choice.size(); ++f) {
    nic::Packet packet = data_packet(0, 5, 1000, 0, 0, nic::ecn::kNotEct,
                                     static_cast<uint16_t>(49152 + again.next() % 16384));
    if (choice[f] != 0) continue;  // spine 0, its link 0
    ++on_first_uplink;
    const uint32_t spine0 = static_cast<uint32_t>(layout.leaves());
    ++down.at(layout.egress_port(spine0, packet) - layout.spine_port(0, 1, 0));
  }
  ASSERT_GT(on_first_uplink, 300u);
  for (uint32_t load : down) EXPECT_GT(load, on_first_uplink / 4 / 2) << on_first_uplink;
}

// Why parallel links matter: two flows between disjoint host pairs of a 1:1 fabric never queue
// on one uplink of the summed speed, but queue behind each other when ECMP hashes them onto the
// same one of several links at the port speed.
TEST(FabricTwinLeafSpine, FlowsOfDisjointPortsCollideOnlyOnParallelLinks) {
  const auto ports = uniform_ports(8);
  config::FabricConfig merged = leaf_spine(4, 2);  // two 200G uplinks per leaf
  config::FabricConfig parallel = merged;
  parallel.leaf_spine.links = 2;  // four 100G uplinks per leaf
  // Two source ports the leaf sends up the same 100G link.
  const FabricLayout layout(parallel, ports);
  const auto uplink = [&](uint32_t src, uint32_t dst, uint16_t udp) {
    return layout.egress_port(0, data_packet(src, dst, 1000, 0, 0, nic::ecn::kNotEct, udp));
  };
  const uint16_t first = 49152;
  uint16_t second = first + 1;
  while (uplink(1, 5, second) != uplink(0, 4, first)) ++second;

  constexpr uint32_t kPackets = 200;
  const auto deepest_uplink_queue = [&](const config::FabricConfig& config) {
    clock::VirtualClock clock;
    FabricTwin twin(config, ports, clock, 1);
    NicDriver driver(twin, clock);
    for (uint32_t i = 0; i < kPackets; ++i) {
      driver.send(data_packet(0, 4, 1000, i, 0, nic::ecn::kNotEct, first));
      driver.send(data_packet(1, 5, 1000, i, 0, nic::ecn::kNotEct, second));
    }
    clock.run_until(clock::kNever);
    EXPECT_EQ(driver.data_received_by(4).size() + driver.data_received_by(5).size(), 2 * kPackets);
    uint64_t deepest = 0;
    for (size_t spine = 0; spine < twin.layout().spines(); ++spine) {
      for (size_t link = 0; link < twin.layout().links(); ++link) {
        const QueueSample q = twin.queue(twin.layout().uplink_port(0, spine, link), 0);
        deepest = std::max(deepest, q.max_depth_bytes);
      }
    }
    return deepest;
  };
  // Merged: at most the one packet that arrived beside the other's waits.
  EXPECT_LE(deepest_uplink_queue(merged), 1000u);
  // Parallel: one flow's worth of packets waits behind the other's, half of them at the peak.
  EXPECT_GE(deepest_uplink_queue(parallel), kPackets / 2 * 1000 / 2);
}

}  // namespace
}  // namespace etwire::twin::testing

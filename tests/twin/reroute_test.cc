// Links going down and up mid-run with routing that learns of it after a detection delay: until
// then traffic hashed onto a dead link is lost; afterwards every switch avoids it, including the
// switches whose own links are fine but lead only through it; with no path left, packets are
// dropped as no-route; a link back up is used again once routing learns of it.
#include <gtest/gtest.h>

#include "clock/virtual_clock.h"
#include "tests/twin/nic_driver.h"
#include "twin/fabric/fabric_twin.h"

namespace etwire::twin::testing {
namespace {

config::FabricConfig two_leaves_two_spines() {
  config::FabricConfig config = quiet_fabric();
  config.topology = config::Topology::kLeafSpine;
  config.leaf_spine.ports_per_leaf = 2;
  config.leaf_spine.spines = 2;
  return config;
}

// One packet per microsecond from `src` to `dst` for `count` microseconds, each with its own
// UDP source port (so ECMP spreads them); PSN i is sent at i us.
void stream(NicDriver& driver, uint32_t src, uint32_t dst, uint32_t count) {
  for (uint32_t i = 0; i < count; ++i) {
    driver.send(
        data_packet(src, dst, 1000, i, 0, nic::ecn::kNotEct, static_cast<uint16_t>(49152 + i)),
        clock::Nanos{i} * 1000);
  }
}

std::vector<uint32_t> psns_received(const NicDriver& driver, uint32_t host) {
  std::vector<uint32_t> psns;
  for (const Delivery& d : driver.data_received_by(host)) psns.push_back(d.packet.psn);
  return psns;
}

uint64_t spine_rx(const FabricTwin& twin, size_t spine) {
  uint64_t packets = 0;
  for (size_t leaf = 0; leaf < twin.layout().leaves(); ++leaf) {
    packets += twin.switch_port_counters(twin.layout().spine_port(spine, leaf)).rx_packets;
  }
  return packets;
}

TEST(FabricTwinReroute, TrafficIsLostUntilDetectionThenAvoidsTheDeadLinkBothWays) {
  clock::VirtualClock clock;
  const auto ports = uniform_ports(4);
  FabricTwin twin(two_leaves_two_spines(), ports, clock, 1);
  NicDriver driver(twin, clock);
  const FabricLayout& layout = twin.layout();
  // leaf0-spine0 goes down at 100 us; routing learns 20 us later.
  twin.schedule_link_fault(layout.uplink_cable(0, 0), false, 100'000, 20'000);
  stream(driver, 0, 2, 300);  // leaf0 -> leaf1: leaf0 picks the spine
  stream(driver, 3, 1, 300);  // leaf1 -> leaf0: spine0 has no way down once the link is dead
  clock.run_until(clock::kNever);

  for (const uint32_t host : {2u, 1u}) {
    const std::vector<uint32_t> got = psns_received(driver, host);
    uint32_t lost_before = 0;
    uint32_t lost_after = 0;
    size_t next = 0;
    for (uint32_t psn = 0; psn < 300; ++psn) {
      const bool arrived = next < got.size() && got[next] == psn;
      if (arrived) ++next;
      if (arrived) continue;
      // Sent from psn us: lost only if it met the dead link before routing knew (100..~120 us).
      if (psn < 95 || psn >= 120) ++lost_after;
      if (psn >= 95 && psn < 120) ++lost_before;
    }
    EXPECT_EQ(lost_after, 0u) << "to host " << host;
    EXPECT_GT(lost_before, 0u) << "to host " << host;  // about half of 20 us of packets
    EXPECT_LT(lost_before, 25u) << "to host " << host;
  }
  EXPECT_TRUE(layout.rerouted());
  // Both directions were spread over both spines before the fault, and only spine 1 after.
  EXPECT_GT(spine_rx(twin, 0), 50u);
  EXPECT_GT(spine_rx(twin, 1), 300u);
  const uint64_t link_drops = twin.switch_port_counters(layout.uplink_port(0, 0)).drops_link_down +
                              twin.switch_port_counters(layout.spine_port(0, 0)).drops_link_down;
  EXPECT_GT(link_drops, 0u);
}

TEST(FabricTwinReroute, ALinkBackUpIsUsedAgainOnceRoutingKnows) {
  clock::VirtualClock clock;
  const auto ports = uniform_ports(4);
  FabricTwin twin(two_leaves_two_spines(), ports, clock, 1);
  NicDriver driver(twin, clock);
  const size_t cable = twin.layout().uplink_cable(0, 0);
  twin.schedule_link_fault(cable, false, 0, 1'000);
  twin.schedule_link_fault(cable, true, 100'000, 1'000);
  stream(driver, 0, 2, 100);  // 0 .. 99 us: spine 1 only
  clock.run_until(clock::kNever);
  const uint64_t spine0_while_down = spine_rx(twin, 0);
  EXPECT_EQ(spine0_while_down, 0u);
  EXPECT_EQ(driver.data_received_by(2).size(), 100u);
  for (uint32_t i = 0; i < 100; ++i) {
    driver.send(
        data_packet(0, 2, 1000, 100 + i, 0, nic::ecn::kNotEct, static_cast<uint16_t>(49152 + i)),
        200'000 + clock::Nanos{i} * 1000);
  }
  clock.run_until(clock::kNever);
  EXPECT_FALSE(twin.layout().rerouted());
  EXPECT_GT(spine_rx(twin, 0), 25u);  // the same hashes as before now use spine 0 again
  EXPECT_EQ(driver.data_received_by(2).size(), 200u);
}

TEST(FabricTwinReroute, WithNoPathLeftPacketsAreDroppedAsNoRoute) {
  clock::VirtualClock clock;
  const auto ports = uniform_ports(4);
  FabricTwin twin(two_leaves_two_spines(), ports, clock, 1);
  NicDriver driver(twin, clock);
  twin.schedule_link_fault(twin.layout().uplink_cable(0, 0), false, 0, 1'000);
  twin.schedule_link_fault(twin.layout().uplink_cable(0, 1), false, 0, 1'000);
  stream(driver, 2, 0, 20);  // from leaf1, starting 2 us in: no spine reaches leaf0 any more
  driver.send(data_packet(0, 1, 1000, 99), 5'000);  // within leaf0: unaffected
  clock.run_until(clock::kNever);
  EXPECT_EQ(driver.data_received_by(0).size(), 0u);
  EXPECT_EQ(driver.data_received_by(1).size(), 1u);
  const WireCounters& leaf1_ingress = twin.switch_port_counters(twin.layout().host_switch_port(2));
  EXPECT_GE(leaf1_ingress.drops_no_route, 18u);  // all but those sent before detection
}

TEST(FabricTwinReroute, ThreeTierAvoidsADeadSpineToSuperSpineLink) {
  config::FabricConfig config = quiet_fabric();
  config.topology = config::Topology::kThreeTier;
  config.leaf_spine.ports_per_leaf = 2;
  config.leaf_spine.spines = 1;
  config.three_tier.leaves_per_pod = 1;
  config.three_tier.super_spines = 2;
  clock::VirtualClock clock;
  const auto ports = uniform_ports(4);  // 2 pods of one leaf and one spine
  FabricTwin twin(config, ports, clock, 1);
  NicDriver driver(twin, clock);
  const FabricLayout& layout = twin.layout();
  // Spine 1 (pod 1) loses its link to super-spine 0: pod 0's spine must stop sending there too.
  const size_t cable = layout.switch_port(layout.spine_uplink_port(1, 0)).cable;
  twin.schedule_link_fault(cable, false, 0, 1'000);
  stream(driver, 0, 2, 100);
  clock.run_until(clock::kNever);
  // The first packet reaches pod 0's spine after 2 us, when the routes have changed: none is
  // lost, and super-spine 0 carries none of them.
  EXPECT_EQ(driver.data_received_by(2).size(), 100u);
  EXPECT_EQ(twin.switch_port_counters(layout.super_spine_port(0, 0)).rx_packets, 0u);
  EXPECT_EQ(twin.switch_port_counters(layout.super_spine_port(1, 0)).rx_packets, 100u);
}

}  // namespace
}  // namespace etwire::twin::testing

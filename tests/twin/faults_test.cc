// Fault hooks: per-link drop probability (fabric-wide, per-port override, set at run time) and
// links going down and up.
#include <gtest/gtest.h>

#include "clock/virtual_clock.h"
#include "tests/twin/nic_driver.h"
#include "twin/fabric/fabric_twin.h"

namespace etwire::twin::testing {
namespace {

TEST(FabricTwinFaults, DropProbabilityLosesAboutThatShareOnEveryLink) {
  config::FabricConfig config = quiet_fabric();
  config.drop_probability = 0.2;
  clock::VirtualClock clock;
  const auto ports = uniform_ports(2);
  FabricTwin twin(config, ports, clock, 11);
  NicDriver driver(twin, clock);
  constexpr uint32_t kSent = 5000;
  for (uint32_t i = 0; i < kSent; ++i) driver.send(data_packet(0, 1, 1000, i));
  clock.run_until(clock::kNever);
  const size_t delivered = driver.data_received_by(1).size();
  // Two links, each losing 20%: 64% survive (sd of the count about 34).
  EXPECT_NEAR(static_cast<double>(delivered), 0.64 * kSent, 150);
  const uint64_t lost_first_hop = twin.host_counters(0).drops_fault;
  const uint64_t lost_second_hop = twin.switch_port_counters(1).drops_fault;
  EXPECT_NEAR(static_cast<double>(lost_first_hop), 0.2 * kSent, 120);
  EXPECT_EQ(delivered + lost_first_hop + lost_second_hop, kSent);
  EXPECT_EQ(twin.packets_in_fabric(), 0u);
}

TEST(FabricTwinFaults, PortOverrideDropProbabilityAppliesToThatPortsCableOnly) {
  config::FabricConfig config = quiet_fabric();
  config::FabricPortOverride broken;
  broken.port = "nic1";
  broken.propagation_delay_ns = config.propagation_delay_ns;
  broken.drop_probability = 1.0;
  broken.ecn = config.ecn;
  broken.pfc = config.pfc;
  config.port_overrides.push_back(broken);
  clock::VirtualClock clock;
  const auto ports = uniform_ports(3);
  FabricTwin twin(config, ports, clock, 1);
  NicDriver driver(twin, clock);
  for (uint32_t i = 0; i < 50; ++i) {
    driver.send(data_packet(0, 1, 1000, i));
    driver.send(data_packet(0, 2, 1000, i));
  }
  clock.run_until(clock::kNever);
  EXPECT_TRUE(driver.data_received_by(1).empty());
  EXPECT_EQ(driver.data_received_by(2).size(), 50u);
  EXPECT_EQ(twin.switch_port_counters(twin.layout().host_switch_port(1)).drops_fault, 50u);
}

TEST(FabricTwinFaults, DropProbabilityCanBeChangedWhileRunning) {
  clock::VirtualClock clock;
  const auto ports = uniform_ports(2);
  FabricTwin twin(quiet_fabric(), ports, clock, 1);
  NicDriver driver(twin, clock);
  const size_t cable = twin.layout().switch_port(twin.layout().host_switch_port(0)).cable;
  twin.set_drop_probability(cable, 1.0);
  for (uint32_t i = 0; i < 20; ++i) driver.send(data_packet(0, 1, 1000, i));
  clock.run_until(clock::kNever);
  EXPECT_TRUE(driver.data_received_by(1).empty());
  EXPECT_EQ(twin.host_counters(0).drops_fault, 20u);

  twin.set_drop_probability(cable, 0.0);
  for (uint32_t i = 20; i < 40; ++i) driver.send(data_packet(0, 1, 1000, i));
  clock.run_until(clock::kNever);
  EXPECT_EQ(driver.data_received_by(1).size(), 20u);
}

TEST(FabricTwinFaults, PacketsOnADownLinkAreDroppedUntilItComesBackUp) {
  clock::VirtualClock clock;
  const auto ports = uniform_ports(2);
  FabricTwin twin(quiet_fabric(), ports, clock, 1);
  NicDriver driver(twin, clock);
  const size_t cable = twin.layout().switch_port(twin.layout().host_switch_port(1)).cable;
  twin.schedule_cable_state(cable, false, 10'000);
  twin.schedule_cable_state(cable, true, 20'000);
  // One packet every microsecond; each starts on the dead cable at t + 1580 and would arrive at
  // t + 2660. A packet is lost when either instant falls in [10'000, 20'000): t in 8000..18000.
  for (uint32_t i = 0; i <= 30; ++i) driver.send(data_packet(0, 1, 1000, i), i * 1000);
  clock.run_until(clock::kNever);
  std::vector<uint32_t> psns;
  for (const Delivery& d : driver.data_received_by(1)) psns.push_back(d.packet.psn);
  std::vector<uint32_t> expected;
  for (uint32_t i = 0; i <= 30; ++i) {
    if (i < 8 || i > 18) expected.push_back(i);
  }
  EXPECT_EQ(psns, expected);
  EXPECT_EQ(twin.switch_port_counters(twin.layout().host_switch_port(1)).drops_link_down, 11u);
}

TEST(FabricTwinFaults, ANicTransmittingOnItsDeadCableLosesThePacket) {
  clock::VirtualClock clock;
  const auto ports = uniform_ports(2);
  FabricTwin twin(quiet_fabric(), ports, clock, 1);
  NicDriver driver(twin, clock);
  twin.set_cable_up(0, false);
  driver.send(data_packet(0, 1, 1000, 0));
  clock.run_until(clock::kNever);
  EXPECT_EQ(twin.host_counters(0).drops_link_down, 1u);
  EXPECT_EQ(twin.host_counters(0).tx_packets, 1u);  // it did go out of the NIC
  twin.set_cable_up(0, true);
  driver.send(data_packet(0, 1, 1000, 1));
  clock.run_until(clock::kNever);
  ASSERT_EQ(driver.data_received_by(1).size(), 1u);
  EXPECT_EQ(driver.data_received_by(1)[0].packet.psn, 1u);
}

}  // namespace
}  // namespace etwire::twin::testing

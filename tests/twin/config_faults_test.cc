// The faults a configuration schedules (fabric.faults): each acts at its time on its link or
// port, ends at its end, shows in the counters, and fault_report says what it did.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>

#include "clock/virtual_clock.h"
#include "tests/twin/nic_driver.h"
#include "twin/fabric/fabric_twin.h"

namespace etwire::twin::testing {
namespace {

using ::testing::HasSubstr;

config::FabricFault fault(config::FaultKind kind, const std::string& link, uint64_t at,
                          uint64_t until) {
  config::FabricFault f;
  f.kind = kind;
  f.key_path = "fabric.faults[0]";
  f.link = link;
  f.at_ns = at;
  f.until_ns = until;
  return f;
}

TEST(FabricTwinConfigFaults, ADegradedLinkRunsSlowerUntilItsEnd) {
  config::FabricConfig config = quiet_fabric();
  config::FabricFault slow = fault(config::FaultKind::kDegrade, "nic1", 0, 10'000);
  slow.speed_bps = k25G;
  config.faults.push_back(slow);
  clock::VirtualClock clock;
  const auto ports = uniform_ports(2);
  FabricTwin twin(config, ports, clock, 1);
  NicDriver driver(twin, clock);
  driver.send(data_packet(0, 1, 1000, 0));
  driver.send(data_packet(0, 1, 1000, 1), 20'000);
  clock.run_until(clock::kNever);
  ASSERT_EQ(driver.data_received_by(1).size(), 2u);
  // 100G to the switch (80 ns), 25G from it (320 ns) while degraded; 80 ns after.
  EXPECT_EQ(driver.data_received_by(1)[0].at, 80 + 1000 + 500 + 320 + 1000);
  EXPECT_EQ(driver.data_received_by(1)[1].at, 20'000 + 80 + 1000 + 500 + 80 + 1000);
  EXPECT_THAT(twin.fault_report().at(0), HasSubstr("link nic1 at 25000000000 b/s"));
}

TEST(FabricTwinConfigFaults, CorruptedFramesAreDiscardedByTheReceivingNic) {
  config::FabricConfig config = quiet_fabric();
  config::FabricFault lossy = fault(config::FaultKind::kLossy, "switch/nic1", 0, 0);
  lossy.corrupt_probability = 1.0;
  config.faults.push_back(lossy);
  clock::VirtualClock clock;
  const auto ports = uniform_ports(2);
  FabricTwin twin(config, ports, clock, 1);
  NicDriver driver(twin, clock);
  for (uint32_t i = 0; i < 3; ++i) driver.send(data_packet(0, 1, 1000, i));
  clock.run_until(clock::kNever);
  EXPECT_EQ(driver.data_received_by(1).size(), 0u);
  EXPECT_EQ(twin.host_counters(1).rx_packets, 3u);  // they arrived, and failed the ICRC check
  EXPECT_EQ(twin.host_counters(1).drops_bad_icrc, 3u);
  EXPECT_THAT(twin.fault_report().at(0), HasSubstr("3 delivered with a bad ICRC"));
}

TEST(FabricTwinConfigFaults, AReorderingLinkLetsAFrameOvertakeTheOneAheadOfIt) {
  config::FabricConfig config = quiet_fabric();
  config::FabricFault lossy = fault(config::FaultKind::kLossy, "nic2", 0, 0);
  lossy.reorder_probability = 1.0;
  config.faults.push_back(lossy);
  clock::VirtualClock clock;
  // Host 2 is slower than its sender, so host 2's switch port queues what host 0 sends.
  const std::vector<TwinPortSpec> ports = {{"nic0", k100G}, {"nic1", k100G}, {"nic2", k25G}};
  FabricTwin twin(config, ports, clock, 1);
  NicDriver driver(twin, clock);
  for (uint32_t i = 0; i < 8; ++i) driver.send(data_packet(0, 2, 1000, i));
  clock.run_until(clock::kNever);
  ASSERT_EQ(driver.data_received_by(2).size(), 8u);
  std::vector<uint32_t> psns;
  for (const Delivery& d : driver.data_received_by(2)) psns.push_back(d.packet.psn);
  EXPECT_FALSE(std::is_sorted(psns.begin(), psns.end()));
  const uint64_t reordered = twin.switch_port_counters(twin.layout().host_switch_port(2)).reordered;
  EXPECT_GT(reordered, 0u);
  EXPECT_THAT(twin.fault_report().at(0), HasSubstr(std::to_string(reordered) + " reordered"));
}

TEST(FabricTwinConfigFaults, ALinkDownAndAStormActAtTheirTimes) {
  config::FabricConfig config = quiet_fabric();
  config.faults.push_back(fault(config::FaultKind::kLinkDown, "nic1", 10'000, 20'000));
  config::FabricFault storm = fault(config::FaultKind::kPfcStorm, "", 0, 1'000'000);
  storm.port = "nic2";
  storm.key_path = "fabric.faults[1]";
  config.faults.push_back(storm);
  clock::VirtualClock clock;
  const auto ports = uniform_ports(3);
  FabricTwin twin(config, ports, clock, 1);
  NicDriver driver(twin, clock);
  for (uint32_t i = 0; i <= 30; ++i) driver.send(data_packet(0, 1, 1000, i), i * 1000);
  clock.run_until(clock::kNever);
  // As the hook does it (faults_test): packets sent from 8 to 18 us meet the dead cable.
  EXPECT_EQ(driver.data_received_by(1).size(), 31u - 11u);
  const std::vector<std::string> report = twin.fault_report();
  ASSERT_EQ(report.size(), 2u);
  EXPECT_THAT(report[0], HasSubstr("fabric.faults[0]: link nic1 down from 10 us to 20 us"));
  EXPECT_THAT(report[0], HasSubstr("11 frames lost on it"));
  EXPECT_GT(twin.host_counters(2).pfc_pauses_sent, 0u);
  EXPECT_THAT(report[1], HasSubstr("port nic2 stormed PFC pauses on priority 3"));
}

TEST(FabricTwinConfigFaults, AnUnknownLinkIsRefusedWhenTheTwinIsBuilt) {
  config::FabricConfig config = quiet_fabric();
  config.faults.push_back(fault(config::FaultKind::kLinkDown, "nowhere", 0, 0));
  clock::VirtualClock clock;
  const auto ports = uniform_ports(2);
  EXPECT_THROW(FabricTwin(config, ports, clock, 1), std::invalid_argument);
}

}  // namespace
}  // namespace etwire::twin::testing

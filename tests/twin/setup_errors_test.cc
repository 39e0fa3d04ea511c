// Impossible setups and packets are refused with a message that says what is wrong.
#include <gtest/gtest.h>

#include <stdexcept>
#include <string>

#include "clock/virtual_clock.h"
#include "tests/twin/nic_driver.h"
#include "twin/fabric/fabric_twin.h"

namespace etwire::twin::testing {
namespace {

std::string build_error(const config::FabricConfig& config,
                        const std::vector<TwinPortSpec>& ports) {
  clock::VirtualClock clock;
  try {
    FabricTwin twin(config, ports, clock, 1);
  } catch (const std::invalid_argument& error) {
    return error.what();
  }
  return "(no error)";
}

config::FabricConfig leaf_spine() {
  config::FabricConfig config = quiet_fabric();
  config.topology = config::Topology::kLeafSpine;
  config.leaf_spine.ports_per_leaf = 2;
  config.leaf_spine.spines = 2;
  return config;
}

TEST(FabricTwinSetup, RejectsImpossibleTopologies) {
  const auto ports = uniform_ports(4);
  config::FabricConfig config = leaf_spine();
  config.leaf_spine.ports_per_leaf = 0;
  EXPECT_EQ(build_error(config, ports),
            "fabric twin: fabric.leaf_spine.ports_per_leaf is 0: a leaf-spine fabric needs at "
            "least one port per leaf");
  config = leaf_spine();
  config.leaf_spine.spines = 0;
  EXPECT_EQ(build_error(config, ports),
            "fabric twin: fabric.leaf_spine.spines is 0: a leaf-spine fabric needs a spine");
  config = leaf_spine();
  config.leaf_spine.oversubscription = 0;
  EXPECT_NE(build_error(config, ports).find("oversubscription must be above 0"), std::string::npos);
  EXPECT_EQ(build_error(quiet_fabric(), {}),
            "fabric twin: no ports to attach: the twin needs at least one loopback port");
  EXPECT_EQ(build_error(quiet_fabric(), {{"a", k100G}, {"b", 0}}),
            "fabric twin: port \"b\" has speed 0");
}

TEST(FabricTwinSetup, RejectsImpossibleThresholds) {
  const auto ports = uniform_ports(2);
  config::FabricConfig config = quiet_fabric();
  config.pfc.enabled = true;
  config.pfc.xoff_bytes = 1000;
  config.pfc.xon_bytes = 1000;
  EXPECT_EQ(build_error(config, ports),
            "fabric twin: fabric.pfc: xon (1000 B) must be below xoff (1000 B)");
  config = quiet_fabric();
  config.pfc.enabled = true;
  config.pfc.priorities = {3, 9};
  EXPECT_EQ(build_error(config, ports),
            "fabric twin: fabric.pfc.priorities: priority 9 is not an 802.1p class (0..7)");
  config = quiet_fabric();
  config.ecn.enabled = true;
  config.ecn.kmin_bytes = 2000;
  config.ecn.kmax_bytes = 1000;
  EXPECT_EQ(build_error(config, ports),
            "fabric twin: fabric.ecn: kmin (2000 B) is above kmax (1000 B)");
  config = quiet_fabric();
  config::FabricPortOverride entry;
  entry.port = "nic1";
  entry.drop_probability = 1.5;
  config.port_overrides.push_back(entry);
  EXPECT_NE(build_error(config, ports)
                .find("fabric override for port \"nic1\" drop_probability: must be between 0 "
                      "and 1"),
            std::string::npos);
}

std::string transmit_error(const nic::Packet& packet) {
  clock::VirtualClock clock;
  const auto ports = uniform_ports(4);
  FabricTwin twin(quiet_fabric(), ports, clock, 1);
  try {
    twin.port(packet.src_port).transmit(packet, 0);
  } catch (const std::invalid_argument& error) {
    return error.what();
  }
  return "(no error)";
}

TEST(FabricTwinSetup, RejectsPacketsTheFabricCannotCarry) {
  EXPECT_EQ(transmit_error(data_packet(1, 9, 1000, 0)),
            "fabric twin: port \"nic1\" transmitted a packet to port index 9, but the fabric has 4 "
            "ports");
  EXPECT_EQ(transmit_error(data_packet(0, 1, 1000, 0, 8)),
            "fabric twin: port \"nic0\" transmitted a packet on priority 8 (802.1p classes are "
            "0..7)");
  EXPECT_EQ(transmit_error(data_packet(0, 1, 0, 0)),
            "fabric twin: port \"nic0\" transmitted a packet of 0 wire bytes (set "
            "Packet::wire_bytes)");
}

TEST(FabricTwinSetup, RejectsBadFaultRequests) {
  clock::VirtualClock clock;
  const auto ports = uniform_ports(2);
  FabricTwin twin(quiet_fabric(), ports, clock, 1);
  EXPECT_THROW(twin.set_drop_probability(2, 0.5), std::invalid_argument);
  EXPECT_THROW(twin.set_drop_probability(0, -0.1), std::invalid_argument);
  EXPECT_THROW(twin.set_cable_up(7, false), std::invalid_argument);
  EXPECT_THROW(twin.start_pfc_storm(2, 3, 0, 10), std::invalid_argument);
  EXPECT_THROW(twin.start_pfc_storm(0, 8, 0, 10), std::invalid_argument);
  EXPECT_THROW(twin.port(2), std::out_of_range);
}

}  // namespace
}  // namespace etwire::twin::testing

// The twin's data planes stand on the layout they are given (the plan of the run's), laying out
// none of their own: given one of another shape than the configuration's, the twin takes its.
#include "dataplane/loopback/twin_rig.h"

#include <gtest/gtest.h>

#include <string>

#include "dataplane/loopback/loopback_data_plane.h"
#include "twin/layout/configured_layout.h"

namespace etwire::dataplane {
namespace {

struct NoFlows final : transport::FlowObserver {
  void on_flow_delivered(const transport::FlowRecord&) override {}
  void on_flow_finished(const transport::FlowRecord&) override {}
};

// Four loopback ports on the configuration's single switch.
config::RunConfig four_ports() {
  config::RunConfig config;
  for (int p = 0; p < 4; ++p) {
    config::PortConfig port;
    port.name = "p";
    port.name += std::to_string(p);
    port.backend = config::Backend::kLoopback;
    port.speed_bps = 100'000'000'000;
    config.ports.push_back(port);
  }
  return config;
}

// The same ports on two leaves and a spine.
twin::FabricLayout leaf_spine_layout(const config::RunConfig& config) {
  config::FabricConfig fabric = config.fabric;
  fabric.topology = config::Topology::kLeafSpine;
  fabric.leaf_spine.ports_per_leaf = 2;
  fabric.leaf_spine.spines = 1;
  fabric.leaf_spine.oversubscription = 1.0;
  fabric.leaf_spine.uplink_speed_bps = 0;
  return twin::FabricLayout(fabric, twin::run_port_specs(config));
}

TEST(TwinRig, StandsOnTheLayoutItIsGiven) {
  const config::RunConfig config = four_ports();
  const twin::FabricLayout given = leaf_spine_layout(config);
  ASSERT_EQ(given.switches(), 3u);
  const TwinRig own(config, twin::run_port_specs(config));
  EXPECT_EQ(own.twin().layout().switches(), 1u);
  const TwinRig rig(config, twin::run_port_specs(config), &given);
  EXPECT_EQ(rig.twin().layout().switches(), 3u);
  EXPECT_EQ(rig.twin().layout().switch_ports(), given.switch_ports());
}

TEST(TwinRig, TheLoopbackDataPlaneFromItsFactoryStandsOnTheLayoutItIsGiven) {
  const config::RunConfig config = four_ports();
  const twin::FabricLayout given = leaf_spine_layout(config);
  NoFlows flows;
  const auto own = loopback_data_plane_factory()(config, flows);
  EXPECT_EQ(own->switch_port_names().size(), 4u);
  const auto plane = loopback_data_plane_factory(1, &given)(config, flows);
  EXPECT_EQ(plane->switch_port_names().size(), given.switch_ports());
  EXPECT_GT(given.switch_ports(), 4u);
}

}  // namespace
}  // namespace etwire::dataplane

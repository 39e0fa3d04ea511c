// The fabric twin's hosts as a run configuration lists them: one per port, in order
// (twin/fabric/setup_problems.h builds the rest once, for the checks and the plan of a run).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "config/run_config.h"
#include "twin/layout/fabric_layout.h"

namespace etwire::twin {

// The twin's port specs of the run's ports, in order: one host per port, with its name and speed,
// whatever the port's backend. The one place they are built, so that every twin of a run (the
// checks', the data planes', the software RNIC's) numbers and names its hosts alike.
std::vector<TwinPortSpec> run_port_specs(const config::RunConfig& config);

// The twin's port specs (name, speed) when every port of the run is on the fabric twin
// (config::on_fabric_twin); nullopt when a port is not.
std::optional<std::vector<TwinPortSpec>> configured_port_specs(const config::RunConfig& config);

}  // namespace etwire::twin

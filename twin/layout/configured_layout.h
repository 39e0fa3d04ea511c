// The fabric twin's hosts as a run configuration lists them: one per port, in order, when every
// port of the run is on the twin (twin/fabric/setup_problems.h builds the rest once).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "config/run_config.h"
#include "twin/layout/fabric_layout.h"

namespace etwire::twin {

// The twin's port specs (name, speed) when every port of the run is on the fabric twin
// (config::on_fabric_twin); nullopt when a port is not.
std::optional<std::vector<TwinPortSpec>> configured_port_specs(const config::RunConfig& config);

}  // namespace etwire::twin

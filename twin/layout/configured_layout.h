// The fabric twin's layout as a run configuration builds it, for the checks and plans made before
// a run: which switches and links there are, their names, and the paths between ports.
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

// The layout when every port of the run is on the fabric twin (config::on_fabric_twin); nullopt
// when a port is not, or when the twin cannot be built (then `why`, if given, gets its message).
std::optional<FabricLayout> configured_layout(const config::RunConfig& config,
                                              std::string* why = nullptr);

}  // namespace etwire::twin

// The twin's view of a loopback run's ports (one host per configured port, in order, with its
// name and speed) and what the loopback data planes report of them.
#pragma once

#include <string>
#include <vector>

#include "config/run_config.h"
#include "dataplane/port_counters.h"
#include "twin/layout/fabric_layout.h"

namespace etwire::dataplane {

// The run's twin port specs (twin::run_port_specs) once every port is a loopback port. Throws
// std::invalid_argument naming the first port that is not.
std::vector<twin::TwinPortSpec> twin_ports(const config::RunConfig& config);

// A port's record from its twin spec and counters.
PortRecord twin_port_record(const twin::TwinPortSpec& spec, const PortCounters& counters);

// The twin's switch port names, by index (DataPlane::switch_port_names).
std::vector<std::string> twin_switch_port_names(const twin::FabricLayout& layout);

}  // namespace etwire::dataplane

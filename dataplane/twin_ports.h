// The twin's view of a loopback run's ports: one host per configured port, in order, with its
// name and speed.
#pragma once

#include <vector>

#include "config/run_config.h"
#include "nic/loopback/fabric_layout.h"

namespace etwire::dataplane {

// Throws std::invalid_argument naming the first port that is not a loopback port.
std::vector<nic::loopback::TwinPortSpec> twin_ports(const config::RunConfig& config);

}  // namespace etwire::dataplane

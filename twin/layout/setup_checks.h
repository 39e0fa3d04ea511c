// The settings the twin cannot run with, checked when it is built. The configuration loader
// reports these with file positions already; the twin checks again because tests and tools build
// FabricConfig by hand, and a bad threshold would otherwise show up as a silent misbehaviour.
#pragma once

#include "config/fabric_config.h"

namespace etwire::twin {

// Throws std::invalid_argument naming the setting and why it is impossible.
void check_fabric_settings(const config::FabricConfig& config);

}  // namespace etwire::twin

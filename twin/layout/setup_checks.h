// The settings the twin cannot run with. The configuration loader reports these with file
// positions already; the twin checks again when it is built because tests and tools build
// FabricConfig by hand, and a bad threshold would otherwise show up as a silent misbehaviour.
#pragma once

#include <optional>

#include "config/fabric_config.h"
#include "twin/layout/setup_problem.h"

namespace etwire::twin {

// The first impossible setting, if any: its key and why.
std::optional<SetupProblem> fabric_settings_problem(const config::FabricConfig& config);

// Throws SetupError for the first impossible setting; returns `config`, so that a constructor can
// check it before the members built from it.
const config::FabricConfig& check_fabric_settings(const config::FabricConfig& config);

}  // namespace etwire::twin

// What would stop the fabric twin being built from a configuration, found without building it:
// the checks before a run (control/check/twin_checks.cc) read the problem as a value, and the
// twin's constructor throws the same problem (SetupError) from the same functions.
#pragma once

#include <optional>
#include <span>
#include <vector>

#include "config/fabric_config.h"
#include "twin/layout/fabric_layout.h"
#include "twin/layout/setup_problem.h"

namespace etwire::twin {

// The first problem of a twin of `config` with these hosts: its settings, its layout, each
// switch's buffer, the faults' targets. The layout is built to find it (it is the twin's shape,
// not the twin); nothing else is.
std::optional<SetupProblem> find_setup_problem(const config::FabricConfig& config,
                                               std::span<const TwinPortSpec> ports);

// A switch whose ingress reserves leave none of its buffer to share.
std::optional<SetupProblem> buffer_problem(const config::SwitchBuffer& buffer,
                                           const FabricLayout& layout);

// A fault whose port or link the twin lacks, or a PFC storm without an end.
std::optional<SetupProblem> fault_problem(const std::vector<config::FabricFault>& faults,
                                          const FabricLayout& layout);

}  // namespace etwire::twin

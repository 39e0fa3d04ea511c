// What would stop the fabric twin being built from a configuration, found without building it:
// the checks before a run (control/check/twin_checks.cc) read the problem as a value, and the
// twin's constructor throws the same problem (SetupError) from the same functions.
#pragma once

#include <optional>
#include <span>
#include <vector>

#include "config/fabric_config.h"
#include "config/run_config.h"
#include "twin/layout/fabric_layout.h"
#include "twin/layout/setup_problem.h"

namespace etwire::twin {

// The first problem of a twin of `config` with these hosts: its settings, its layout, each
// switch's buffer, the faults' targets. The layout is built to find it (it is the twin's shape,
// not the twin); nothing else is.
std::optional<SetupProblem> find_setup_problem(const config::FabricConfig& config,
                                               std::span<const TwinPortSpec> ports);

// The fabric twin a run configuration describes, as the checks and the plan of a run see it: its
// ports, its layout and its first problem, each built or found once.
struct ConfiguredTwin {
  // The twin's hosts (name, speed), one per configured port, when every port of the run is on
  // the twin (config::on_fabric_twin); nullopt when a port is not.
  std::optional<std::vector<TwinPortSpec>> ports;
  // The twin's shape, when it can be built; beside it `problem` may name a buffer or a fault the
  // twin cannot take.
  std::optional<FabricLayout> layout;
  std::optional<SetupProblem> problem;  // the first, as find_setup_problem finds it
};

// The twin's ports of `config`; lay_out_twin adds the rest, for a fabric section in a state to
// build (a configuration without other errors).
ConfiguredTwin configure_twin(const config::RunConfig& config);
// Its layout, or the first problem on the way there; nothing without ports.
void lay_out_twin(ConfiguredTwin& twin, const config::FabricConfig& fabric);

// A switch whose ingress reserves leave none of its buffer to share.
std::optional<SetupProblem> buffer_problem(const config::SwitchBuffer& buffer,
                                           const FabricLayout& layout);

// A fault whose port or link the twin lacks, or a PFC storm without an end.
std::optional<SetupProblem> fault_problem(const std::vector<config::FabricFault>& faults,
                                          const FabricLayout& layout);

}  // namespace etwire::twin

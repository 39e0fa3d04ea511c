// The checks of fabric.faults that need the twin's layout: every fault's link or port names a
// part of the twin, and the twin is what the run uses.
#pragma once

#include "config/run_config.h"
#include "control/load/diagnostic.h"
#include "control/load/source_map.h"
#include "twin/fabric/setup_problems.h"

namespace etwire::control {

// `twin`: the twin of `config` (twin::configure_twin), built once for every check.
void check_faults(const config::RunConfig& config, const twin::ConfiguredTwin& twin,
                  const SourceMap& where, Diagnostics& out);

}  // namespace etwire::control

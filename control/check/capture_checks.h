// The check of telemetry.capture.switch_ports that needs the twin's layout: every name is a
// switch port of the fabric twin the run uses, once.
#pragma once

#include "config/run_config.h"
#include "control/load/diagnostic.h"
#include "control/load/source_map.h"
#include "twin/fabric/setup_problems.h"

namespace etwire::control {

// `twin`: the twin of `config` (twin::configure_twin), built once for every check.
void check_capture(const config::RunConfig& config, const twin::ConfiguredTwin& twin,
                   const SourceMap& where, Diagnostics& out);

}  // namespace etwire::control

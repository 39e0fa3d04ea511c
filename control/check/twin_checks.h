// What the fabric twin refuses when it is built, found before the run: when every port of the run
// is on the twin, the checks build it as the run would (its layout, links, switch ports and
// buffers) and report what it cannot model, so validate refuses every twin run refuses.
#pragma once

#include "config/run_config.h"
#include "control/load/diagnostic.h"
#include "control/load/source_map.h"

namespace etwire::control {

void check_twin(const config::RunConfig& config, const SourceMap& where, Diagnostics& out);

}  // namespace etwire::control

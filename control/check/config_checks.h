// Checks that span sections of a parsed configuration, made on the plain structs and located
// through the source map: port references, backend settings and limits, duplicate port
// addresses and devices, path MTU against port MTUs, PFC priorities against data priorities,
// DCQCN rates against port speeds, and a run that would need two clocks. Internal to control/.
#pragma once

#include "config/run_config.h"
#include "control/load/diagnostic.h"
#include "control/load/source_map.h"

namespace etwire::control {

struct SectionPresence {
  bool fabric = false;
  bool dpdk = false;
};

void check_config(const config::RunConfig& config, const SectionPresence& present,
                  const SourceMap& where, Diagnostics& out);

}  // namespace etwire::control

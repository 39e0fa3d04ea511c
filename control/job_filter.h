// The feeder's partial-replay filter for a job, built from its `filter:` settings.
#pragma once

#include "control/workload_config.h"
#include "emulator/feeder/node_filter.h"

namespace etwire::control {

feeder::NodeFilter make_node_filter(const NodeFilterConfig& config);

}  // namespace etwire::control

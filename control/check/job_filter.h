// The feeder's partial-replay filter for a job, built from its `filter:` settings.
#pragma once

#include "config/workload_config.h"
#include "trace/feeder/node_filter.h"

namespace etwire::control {

feeder::NodeFilter make_node_filter(const config::NodeFilterConfig& config);

}  // namespace etwire::control

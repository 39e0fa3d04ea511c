#include "control/check/job_filter.h"

namespace etwire::control {

feeder::NodeFilter make_node_filter(const config::NodeFilterConfig& config) {
  feeder::NodeFilter filter;
  if (!config.node_types.empty()) {
    filter.types.reset();
    for (auto type : config.node_types) filter.types.set(static_cast<size_t>(type));
  }
  filter.min_id = config.min_node_id;
  filter.max_id = config.max_node_id;
  filter.process_groups.insert(config.process_groups.begin(), config.process_groups.end());
  return filter;
}

}  // namespace etwire::control

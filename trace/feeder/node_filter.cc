#include "trace/feeder/node_filter.h"

namespace etwire::feeder {

NodeFilter NodeFilter::comm_only() {
  NodeFilter filter;
  filter.types.reset();
  filter.types.set(static_cast<size_t>(trace::NodeType::kCommSend));
  filter.types.set(static_cast<size_t>(trace::NodeType::kCommRecv));
  filter.types.set(static_cast<size_t>(trace::NodeType::kCommColl));
  return filter;
}

bool NodeFilter::keeps(const trace::TraceNode& node) const {
  if (!types.test(static_cast<size_t>(node.type))) return false;
  if (node.id < min_id || node.id > max_id) return false;
  if (!process_groups.empty() && trace::is_comm_type(node.type)) {
    // Both branches are lvalues, so the group name is looked up in place rather than copied.
    static const std::string kAbsent;
    const std::string& pg = node.comm.pg_name ? *node.comm.pg_name : kAbsent;
    if (process_groups.count(pg) == 0) return false;
  }
  return true;
}

bool NodeFilter::keeps_everything() const {
  return types.all() && min_id == 0 && max_id == UINT64_MAX && process_groups.empty();
}

}  // namespace etwire::feeder

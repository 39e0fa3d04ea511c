// Partial replay: which nodes the feeder hands out. A node the filter drops still takes part in
// dependency resolution: it completes inside the feeder as soon as it is ready, so its dependents
// still run.
#pragma once

#include <bitset>
#include <cstdint>
#include <optional>
#include <set>
#include <string>

#include "trace/node.h"

namespace etwire::feeder {

struct NodeFilter {
  // Node types to keep; all set = keep every type. comm_only() keeps SEND, RECV and COLL.
  std::bitset<trace::kNodeTypeCount> types = std::bitset<trace::kNodeTypeCount>().set();
  // Inclusive node id range to keep.
  uint64_t min_id = 0;
  uint64_t max_id = UINT64_MAX;
  // Process-group names to keep (as written in pg_name; "" stands for an absent pg_name). Empty
  // set = no filtering by group. Nodes without a group (compute, memory) are kept by this test.
  std::set<std::string> process_groups;

  static NodeFilter comm_only();
  bool keeps(const trace::TraceNode& node) const;
  bool keeps_everything() const;
};

}  // namespace etwire::feeder

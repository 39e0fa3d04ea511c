// The trace errors the feeder raises, each located at the offending record (file, record index,
// node id) and worded so that a lab engineer can find and fix the record.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "trace/feeder/edge_pool.h"
#include "trace/node.h"
#include "trace/trace_error.h"

namespace etwire::feeder {

// `again` reuses an id read earlier; `first_record` is that earlier record when still known.
trace::TraceError duplicate_id_error(const std::string& file, const trace::TraceNode& again,
                                     std::optional<uint64_t> first_record);

trace::TraceError self_dependency_error(const std::string& file, const trace::TraceNode& node);

// `child` names `parent_id` as a data dependency and the file ended without that id.
// `other_missing` counts further such references elsewhere in the file.
trace::TraceError missing_parent_error(const std::string& file, const trace::TraceNode& child,
                                       uint64_t parent_id, uint64_t other_missing);

// One node of a dependency cycle and the kind of dependency by which it waits for the next.
struct CycleLink {
  const trace::TraceNode* node;
  EdgeKind waits_by;
};

// cycle[i] waits for cycle[i + 1], and the last waits for the first. Located at cycle[0]. When
// ctrl deps are honoured each link says which list it comes from, since ctrl-dep cycles usually
// mean the trace's ctrl deps are caller/callee links rather than ordering.
trace::TraceError cycle_error(const std::string& file, const std::vector<CycleLink>& cycle,
                              bool ctrl_deps_honoured);

}  // namespace etwire::feeder

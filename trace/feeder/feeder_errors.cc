#include "trace/feeder/feeder_errors.h"

#include <fmt/format.h>

#include <string_view>

namespace etwire::feeder {

namespace {

trace::TraceLocation at(const std::string& file, const trace::TraceNode& node) {
  return trace::TraceLocation{file, node.record_index, node.id};
}

// Long cycles are cut short: the first ids are enough to find the loop in the file.
constexpr size_t kMaxCycleIdsShown = 16;

}  // namespace

trace::TraceError duplicate_id_error(const std::string& file, const trace::TraceNode& again,
                                     std::optional<uint64_t> first_record) {
  std::string first = first_record ? fmt::format("first read at record {}", *first_record)
                                   : std::string("first read earlier in the file");
  return trace::TraceError(
      at(file, again), fmt::format("node id {} appears again at record {} ({}); node ids must be "
                                   "unique within a file",
                                   again.id, again.record_index, first));
}

trace::TraceError self_dependency_error(const std::string& file, const trace::TraceNode& node) {
  return trace::TraceError(
      at(file, node),
      fmt::format("node id {} lists itself in data_deps (a dependency cycle of one node)",
                  node.id));
}

trace::TraceError missing_parent_error(const std::string& file, const trace::TraceNode& child,
                                       uint64_t parent_id, uint64_t other_missing) {
  std::string others = other_missing == 0
                           ? std::string()
                           : fmt::format(" ({} more data dependenc{} in the file name missing ids)",
                                         other_missing, other_missing == 1 ? "y" : "ies");
  return trace::TraceError(
      at(file, child),
      fmt::format("node id {} has a data dependency on node id {}, which never appears in the "
                  "file{}",
                  child.id, parent_id, others));
}

trace::TraceError cycle_error(const std::string& file, const std::vector<CycleLink>& cycle,
                              bool ctrl_deps_honoured) {
  auto arrow = [&](const CycleLink& link) -> std::string_view {
    if (!ctrl_deps_honoured) return " -> ";
    return link.waits_by == EdgeKind::kCtrl ? " -ctrl-> " : " -data-> ";
  };
  std::string ids;
  bool any_ctrl = false;
  for (size_t i = 0; i < cycle.size(); ++i) {
    any_ctrl = any_ctrl || cycle[i].waits_by == EdgeKind::kCtrl;
    if (i < kMaxCycleIdsShown) ids += fmt::format("{}{}", cycle[i].node->id, arrow(cycle[i]));
  }
  if (cycle.size() > kMaxCycleIdsShown) {
    ids += fmt::format("... ({} more){}", cycle.size() - kMaxCycleIdsShown, arrow(cycle.back()));
  }
  ids += fmt::format("{}", cycle.front().node->id);
  std::string hint =
      any_ctrl ? "; ctrl_deps are being honoured, and PyTorch-converted traces use them for "
                 "caller/callee links: replay with ctrl deps ignored"
               : std::string();
  return trace::TraceError(
      at(file, *cycle.front().node),
      fmt::format("dependency cycle of {} node{} (each waits for the next): {}{}", cycle.size(),
                  cycle.size() == 1 ? "" : "s", ids, hint));
}

}  // namespace etwire::feeder

#include "trace/trace_error.h"

#include <fmt/format.h>

namespace etwire::trace {

std::string format_trace_error(const TraceLocation& where, const std::string& problem) {
  std::string out = where.file.empty() ? std::string("<trace>") : where.file;
  if (where.record_index) out += fmt::format(": record {}", *where.record_index);
  if (where.node_id) {
    out += where.record_index ? fmt::format(" (node id {})", *where.node_id)
                              : fmt::format(": node id {}", *where.node_id);
  }
  out += ": ";
  out += problem;
  return out;
}

TraceError::TraceError(TraceLocation where, const std::string& problem)
    : std::runtime_error(format_trace_error(where, problem)),
      where_(std::move(where)),
      problem_(problem) {}

}  // namespace etwire::trace

// The one error type for bad trace input. Its message always names the file and, where known, the
// record index and node id, so a lab engineer can find the offending record.
#pragma once

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>

namespace etwire::trace {

struct TraceLocation {
  std::string file;
  std::optional<uint64_t> record_index;
  std::optional<uint64_t> node_id;
};

class TraceError : public std::runtime_error {
 public:
  TraceError(TraceLocation where, const std::string& problem);

  const TraceLocation& where() const { return where_; }
  const std::string& problem() const { return problem_; }

 private:
  TraceLocation where_;
  std::string problem_;
};

// "FILE: record N (node id X): PROBLEM", leaving out the parts that are unknown.
std::string format_trace_error(const TraceLocation& where, const std::string& problem);

}  // namespace etwire::trace

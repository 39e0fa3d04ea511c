// Writes the Chrome trace event format (JSON object form: {"traceEvents": [...]}), which Perfetto
// and chrome://tracing open, event by event through a buffer, so a run of millions of flows is
// never held whole. Times are run-clock nanoseconds, written as the format's microseconds with
// three decimals (exact). The file replaces `path` only when close() has written all of it.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "outputs/output_file.h"

namespace etwire::outputs::timeline {

class TraceEventWriter {
 public:
  // Throws std::runtime_error "<path>: <reason>" when the file cannot be created.
  explicit TraceEventWriter(std::string path);

  // Names a process (a group of tracks) and places it among the others (lowest first).
  void process(uint32_t pid, std::string_view name, int64_t sort_index);
  // Names a thread (one track of slices) of process `pid` and places it within its process.
  void thread(uint32_t pid, uint32_t tid, std::string_view name, int64_t sort_index);
  // A complete slice ("X") from `start_ns` to `end_ns` on thread `tid`.
  void slice(uint32_t pid, uint32_t tid, std::string_view name, std::string_view category,
             int64_t start_ns, int64_t end_ns, const nlohmann::json& args);
  // A counter sample ("C") of process `pid`: each member of `values` is a series of `name`.
  void counter(uint32_t pid, std::string_view name, int64_t at_ns, const nlohmann::json& values);

  // Ends the event list, adds `other_data` (what the run was) and renames the file into place;
  // throws the first write error.
  void close(const nlohmann::json& other_data);
  uint64_t events() const { return events_; }

 private:
  // Starts an event: the separator, then {"ph":..,"pid":..; the caller adds the rest and '}'.
  std::string& begin(char phase, uint32_t pid);
  void end();
  // Two metadata events of process `pid` (or its thread `tid`): "<what>_name" and
  // "<what>_sort_index".
  void metadata(uint32_t pid, std::optional<uint32_t> tid, std::string_view what,
                std::string_view name, int64_t sort_index);

  StreamedFile file_;
  uint64_t events_ = 0;
};

}  // namespace etwire::outputs::timeline

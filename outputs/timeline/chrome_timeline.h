// `etwire timeline`: a run's results directory as one Chrome trace (JSON trace event format),
// opened by Perfetto (ui.perfetto.dev, trace_processor) and chrome://tracing. Per job a process
// of rank tracks (each rank's compute and communication nodes, nodes.csv) and one of collective
// tracks (every instance from its last arrival to its end, per process group); per port a process
// of QP tracks (each message from posting to its last acknowledgement, flows.csv) and counter
// tracks (throughput, paced rate, congestion counters; ports.csv). Slices that overlap on one
// track are spread over numbered lanes ("rank 3 compute #2").
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace etwire::outputs::timeline {

struct TimelineWritten {
  uint64_t events = 0;
  uint64_t node_slices = 0;
  uint64_t collective_slices = 0;
  uint64_t flow_slices = 0;
  uint64_t port_samples = 0;
  // The files that were not there, and the tracks left out for it.
  std::vector<std::string> notes;
};

// Writes the trace of the run in `dir` to `out` (replaced only once written in full). Throws
// report::ReportInputError naming the file and line when `dir` is not a results directory or a
// file in it is malformed; std::runtime_error "<out>: <reason>" when `out` cannot be written.
TimelineWritten write_timeline(const std::filesystem::path& dir, const std::string& out);

}  // namespace etwire::outputs::timeline

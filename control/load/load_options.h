// How a run configuration is loaded: --set overrides, whether the trace sets are read, and a trace
// set in place of the workload.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace etwire::control {

// A trace set replayed in place of the configuration's workload (`etwire sweep`): the workload
// becomes one job, named and mapped as the configuration's first job, replaying `trace` for
// `warmup_iterations` and then `iterations` times; the other jobs and their mapping entries are
// left out, and so are the first job's world size, comm groups and filter.
struct JobSubstitute {
  std::string trace;  // the trace set, as workload.jobs[].trace takes it (absolute: as it is)
  uint32_t iterations = 1;
  uint32_t warmup_iterations = 0;
};

struct LoadOptions {
  std::vector<std::string> overrides;  // "key.path=value", applied in order
  // Read each job's trace set: world size, process groups and the communication per rank. Off,
  // the checks that need the traces are skipped (and ranks are placed only for jobs that state
  // their world_size).
  bool read_traces = true;
  // Applied after the overrides, so they may change the mapping it keeps.
  std::optional<JobSubstitute> substitute_job = std::nullopt;
};

}  // namespace etwire::control

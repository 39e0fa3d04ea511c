// A trace set replayed in place of a configuration's workload (`etwire sweep`): the workload
// becomes one job, named and mapped as the configuration's first job, replaying the trace set for
// `warmup_iterations` and then `iterations` times. The other jobs and their mapping entries are
// left out, and so are the first job's world size, comm groups and filter, which describe its own
// trace set. A plan derived with it (config_loader.h) runs every check on the result, as it would
// on a file that said so.
#pragma once

#include <cstdint>
#include <string>

#include "config/run_config.h"

namespace etwire::control {

struct JobSubstitute {
  std::string trace;  // the trace set, as workload.jobs[].trace takes it (absolute: as it is)
  uint32_t iterations = 1;
  uint32_t warmup_iterations = 0;
};

// Changes `config` as its sections read it (RunPlan::as_read); a configuration without jobs is
// left as it is.
void substitute_job(config::RunConfig& config, const JobSubstitute& substitute);

// How the change is named in a plan's settings (RunPlan::settings), by the trace set's directory
// and name: the points of a sweep tell themselves apart wherever the sweep wrote them.
std::string substitute_setting(const JobSubstitute& substitute);

}  // namespace etwire::control

// The report `etwire run` prints when a run ends, laid out like nccl-tests so its bandwidth
// figures read the same way: per (job, collective, size, group size) the mean CCT, algbw and busbw
// of the measured instances, then flow completion time percentiles, job time per iteration,
// congestion counters of the ports that saw any, and the run's status. Fits in 100 columns for
// the usual name lengths.
#pragma once

#include <string>

#include "engine/run_results.h"

namespace etwire::outputs {

std::string console_report(const engine::RunResults& results);

// " (retry-exceeded 4, flushed 8059)": the failed flows by status, "" when none failed.
std::string failed_flows_by_status(const engine::RunResults& results);

}  // namespace etwire::outputs

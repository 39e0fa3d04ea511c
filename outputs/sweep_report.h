// The console report of `etwire sweep`: per collective and algorithm the nccl-tests table (size,
// count, type, redop, root, time, algbw, busbw, and etwire's ideal % of the link's goodput), then
// the alpha-beta fit of every series and the runs' notes and errors.
#pragma once

#include <string>

#include "outputs/sweep_results.h"

namespace etwire::outputs {

std::string sweep_report(const SweepResults& sweep);

}  // namespace etwire::outputs

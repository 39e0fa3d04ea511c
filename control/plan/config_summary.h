// The one-line description of a loaded configuration that `etwire validate` prints on success:
// jobs and their ranks, ports by backend and speed, path MTU, DCQCN, and the fabric twin.
#pragma once

#include <string>

#include "control/plan/run_plan.h"

namespace etwire::control {

// "1 job (allreduce: 8 ranks x 4 iterations), 8 loopback ports at 100 Gb/s, PMTU 4096,
// write-with-imm, DCQCN on, single-switch twin"
std::string summarize_config(const RunPlan& loaded);

}  // namespace etwire::control

// The one-line description of a loaded configuration that `etwire validate` prints on success:
// jobs and their ranks, ports by backend and speed, path MTU, DCQCN, sprayed source ports and
// out-of-order receivers when set, and the fabric twin (its load balancing and trimming when set).
#pragma once

#include <string>

#include "control/plan/run_plan.h"

namespace etwire::control {

// "1 job (allreduce: 8 ranks x 4 iterations), 8 loopback ports at 100 Gb/s, PMTU 4096,
// write-with-imm, DCQCN on, single-switch twin, cables 1 us one way, switches 500 ns"
std::string summarize_config(const RunPlan& loaded);

// The fabric twin as the plan built it, so that a fabric imported from an InfraGraph file can be
// checked: "leaf-spine twin of 4 leaves, 2 spines, 1 x 400 Gb/s per leaf-spine pair, cables 1 us
// one way, switches 500 ns (fabric.infragraph: 8 host NICs)".
std::string describe_fabric(const RunPlan& loaded);

}  // namespace etwire::control

// `validate --devices`: the run's data plane set up and torn down again, the device checks `run`
// makes before its first packet (under MPI, every process its own devices, as `run` does).
#pragma once

#include "cluster/session.h"
#include "control/plan/run_plan.h"

namespace etwire::runner {

// The exit code `run` would give, with its message; every process releases what it set up.
int check_devices(const cluster::Session& session, const control::RunPlan& plan);

}  // namespace etwire::runner

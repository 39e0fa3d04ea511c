// `etwire run --predict`: the fabric twin's prediction of a lab run, a plan derived from the lab's
// (config_loader.h). Every port entry that is not a loopback port becomes one, a port facing a
// router loses its next hop (the twin's switches are L2), and no frames are captured (the twin's
// frames are not the lab's). The jobs, their trace sets and their placement stay the lab's.
#pragma once

#include "control/plan/run_plan.h"
#include "control/resolve/config_loader.h"

namespace etwire::control {

// Whether every port of the plan is a loopback port already (then the run is the prediction).
bool all_ports_on_loopback(const RunPlan& lab);

// The change from the lab's configuration to the prediction's.
PlanChange twin_prediction();

}  // namespace etwire::control

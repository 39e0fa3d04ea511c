// `etwire run --predict`: the fabric twin's prediction of a lab run, a plan derived from the lab's
// (config_loader.h). Every port entry that is not a loopback port becomes one, a port facing a
// router loses its next hop (the twin's switches are L2), and no frames are captured (the twin's
// frames are not the lab's). The jobs, their trace sets and their placement stay the lab's.
#pragma once

#include <string>
#include <vector>

#include "control/plan/run_plan.h"
#include "control/resolve/config_loader.h"

namespace etwire::control {

// Whether every port of the plan is a loopback port already (then the run is the prediction).
bool all_ports_on_loopback(const RunPlan& lab);
bool all_ports_on_loopback(const config::RunConfig& config);

// The change from the lab's configuration to the prediction's.
PlanChange twin_prediction();

// The settings the prediction of a lab's configuration takes as --set before the command line's:
// those of the device profile its fabric.profile names (none without one; a plan on the twin
// has them applied already, load_options.h), then `extra` (a profile given on the command line,
// which so wins). Throws DeviceProfileError when the named profile cannot be read.
std::vector<std::string> prediction_profile(const RunPlan& lab,
                                            const std::vector<std::string>& extra);

}  // namespace etwire::control

// What `plan` says of how collectives go out: the protocol's messages and buffers, and under
// `auto` (collectives.protocol or collectives.algorithms) the tuner's model times and picks for
// each distinct collective, as text and as JSON.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "control/plan/run_plan.h"
#include "control/plan/traffic_plan.h"

namespace etwire::control {

// The protocol every collective runs, or under `auto` what the tuner picked for each.
std::string protocol_lines(const RunPlan& loaded, const TrafficPlan& plan);
nlohmann::ordered_json protocol_json(const RunPlan& loaded, const TrafficPlan& plan);

// The collectives whose algorithm is `auto`: each algorithm's model time and the pick; empty
// when no algorithm is `auto`.
std::string algorithm_lines(const RunPlan& loaded, const TrafficPlan& plan);
nlohmann::ordered_json algorithm_choices_json(const RunPlan& loaded, const TrafficPlan& plan);

}  // namespace etwire::control

// `etwire plan`'s output: the resolved rank -> port -> address table, the connections and QPs
// per rank, and the traffic per port with the busiest one, as text tables or as JSON.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "control/plan/run_plan.h"
#include "control/plan/traffic_plan.h"

namespace etwire::control {

std::string plan_to_text(const RunPlan& loaded, const TrafficPlan& plan);
nlohmann::ordered_json plan_to_json(const RunPlan& loaded, const TrafficPlan& plan);

}  // namespace etwire::control

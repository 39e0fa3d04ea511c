// `etwire run --predict`: the configuration run twice, first on the fabric twin its `fabric`
// section describes (the device under test), its ports made loopback ports of the same speeds,
// into <results>/prediction/; then on the configured ports into <results>.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "control/plan/run_plan.h"
#include "runner/configured_run.h"

namespace etwire::runner {

// control::prediction_profile: the settings a lab's prediction takes before the command line's
// (the profile `lab` names, then `extra`); nullopt after printing why the named profile cannot
// be read.
std::optional<std::vector<std::string>> read_prediction_profile(
    const control::RunPlan& lab, const std::vector<std::string>& extra);

// Returns the exit code of the measurement, or the prediction's when it did not complete. With
// `repeats` above 1 each is a series (repeated_run.h): <results>/prediction/repeat-K, then
// <results>/repeat-K.
// `profile`: a device profile's overrides (control/load/device_profile.h), applied to the
// prediction only, after those of the profile the configuration names (fabric.profile) and
// before the run's own --set.
int run_with_prediction(const RunRequest& opts, uint32_t repeats = 1,
                        const std::vector<std::string>& profile = {});

}  // namespace etwire::runner

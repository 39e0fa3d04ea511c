// Which of a device fit's parameters a profile keeps, and where its marking curve settles, judged
// by what matters: each lab run replayed as sent (as_sent_run.h) through the twin with the
// candidate, against what reached the calibrated port in the lab. The fit reads the device's
// queue from frames' delays, which a receiver's polling and the device's own timing blur; the
// search keeps a parameter only where it brings the replays closer to the lab, and moves the
// marking thresholds a frame at a time while that helps.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "runner/as_sent_run.h"
#include "runner/device_fit.h"

namespace etwire::runner {

struct ProfileSearchInput {
  std::string config;
  std::vector<std::string> overrides;  // the lab runs' --set, applied after the profile
  std::vector<std::string> labs;
  size_t port = 0;
  uint64_t configured_rate_bps = 0;
  // The configuration's own marking curve in frames of the fit's size, where it marks: the
  // refinement also starts from it.
  std::optional<twin::MarkingFit> configured_marking;
};

struct ProfileChoice {
  std::vector<std::string> overrides;  // the profile's
  double score = 0;                    // the sum over runs of the relative residuals
  double configured_score = 0;         // the same with no profile
  std::vector<PortReplay> replays;     // the calibrated port in each run, with the profile
  std::vector<PortReplay> configured;  // and with none
  size_t replays_run = 0;
};

// Returns nullopt when a candidate's plan cannot be built (printed).
std::optional<ProfileChoice> choose_profile(const ProfileSearchInput& input, const DeviceFit& fit);

// The residual of one run at the port: relative errors of CE marks, lost data frames and the last
// data frame's arrival, added (each against a floor, so that a run with few marks or losses does
// not weigh more than the rest).
double residual_score(const PortReplay& port);

}  // namespace etwire::runner

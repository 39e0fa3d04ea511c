// `etwire calibrate`: a device profile (control/load/device_profile.h) fitted to lab runs that
// recorded their frames. The frames that crossed the device toward one port (queue_crossings.h)
// give its queue's rate, least delay, depth before it drops and marking curve (device_fit.h);
// each run is then replayed as sent (as_sent_run.h) through the twin as configured and through the
// twin with the profile, and the residuals against the lab are printed and kept in the profile.
#pragma once

#include <string>
#include <vector>

namespace etwire::runner {

struct CalibrateRequest {
  std::string config;                  // the lab runs' configuration
  std::vector<std::string> overrides;  // --set, as the lab runs had them
  std::vector<std::string> labs;       // results directories with capture/
  std::string port;                    // the port the device's queue feeds; "": the busiest
  std::string out;                     // the profile; "": <first lab>/device-profile.yaml
};

// Returns an exit code (exit_codes.h): 2 for input that cannot be calibrated from, named.
int calibrate_run(const CalibrateRequest& request);

}  // namespace etwire::runner

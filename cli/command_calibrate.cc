// `etwire calibrate CONFIG LAB_DIR...`: a device profile fitted to lab runs' captures
// (runner/calibrate_run.h). Exit 0 with the profile written; 2 for input that cannot be
// calibrated from; 1 when the profile cannot be written.
#include <memory>

#include "cli/commands.h"
#include "runner/calibrate_run.h"

namespace etwire::cli {

CommandAction add_calibrate_command(CLI::App& app) {
  auto opts = std::make_shared<runner::CalibrateRequest>();
  CLI::App* sub = app.add_subcommand(
      "calibrate",
      "Fit the fabric twin's model of the device under test to lab runs that recorded their "
      "frames (telemetry.record.pcap): from the frames that crossed the device toward one port, "
      "its queue's rate, least delay, depth before it drops and ECN marking curve (thresholds, "
      "probability, averaging). Replays each run as sent through the twin as configured and with "
      "the fit, prints the residuals against the lab, and writes a device profile for run "
      "--predict --profile and replay --profile.");
  sub->add_option("config", opts->config, "The lab runs' configuration (YAML)")->required();
  sub->add_option("LAB_DIR", opts->labs, "Results directories of the lab runs, with capture/")
      ->required();
  sub->add_option("-s,--set", opts->overrides,
                  "Override a key as the lab runs did: KEY.PATH=VALUE (repeatable)")
      ->allow_extra_args(false);
  sub->add_option("--port", opts->port,
                  "The port the device's queue feeds (default: the one the most data was sent "
                  "to)");
  sub->add_option("-o,--out", opts->out,
                  "The profile to write (default: device-profile.yaml in the first LAB_DIR)");
  return [opts]() -> int { return runner::calibrate_run(*opts); };
}

}  // namespace etwire::cli

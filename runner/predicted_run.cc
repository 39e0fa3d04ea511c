#include "runner/predicted_run.h"

#include <fmt/format.h>

#include <filesystem>
#include <iostream>
#include <set>
#include <string>

#include "cluster/session.h"
#include "config/fabric_config.h"
#include "control/resolve/config_loader.h"
#include "runner/exit_codes.h"

namespace etwire::runner {

int run_with_prediction(const RunRequest& opts) {
  if (cluster::Session::current().size() > 1) {
    std::cerr << "error: --predict is not built for a run split between emulator processes; run "
                 "the prediction on its own, with --set ports[N].backend=loopback for each port "
                 "entry\n";
    return kExitBadInput;
  }
  control::LoadOptions load_options;
  load_options.overrides = opts.overrides;
  const control::LoadedConfig lab = control::load_config_file(opts.config, load_options);
  const RunRequest& measured = opts;
  // An invalid configuration is reported as a run reports it.
  if (!lab.ok()) return run_configuration(measured);
  RunRequest prediction = measured;
  prediction.no_metrics = true;
  std::set<std::string> entries;  // port entries of the configuration, not on the twin already
  std::set<std::string> routed;   // entries facing a router: the twin's switches are L2
  for (const config::PortConfig& port : lab.config.ports) {
    if (port.backend != config::Backend::kLoopback) entries.insert(port.key_path);
    if (port.next_hop_mac) routed.insert(port.key_path);
  }
  if (entries.empty()) {
    std::cerr << fmt::format(
        "error: {}: --predict: every port is a loopback port already, so the run is the fabric "
        "twin's prediction; leave --predict out\n",
        opts.config);
    return kExitBadInput;
  }
  for (const std::string& entry : entries)
    prediction.overrides.push_back(entry + ".backend=loopback");
  for (const std::string& entry : routed) prediction.overrides.push_back(entry + ".next_hop_mac=");
  // The twin's frames are not the lab's: capture belongs to the measurement.
  prediction.overrides.push_back("telemetry.record.pcap=false");
  const std::filesystem::path out =
      std::filesystem::path(opts.out.empty() ? lab.config.telemetry.output_dir : opts.out);
  prediction.out = (out / "prediction").string();
  std::cout << fmt::format("Prediction: the fabric twin ({}) in place of the device under test\n",
                           config::topology_name(lab.config.fabric.topology));
  const int predicted = run_configuration(prediction);
  if (stop_was_requested() || (predicted != kExitOk && predicted != kExitFailure)) {
    std::cerr << fmt::format(
        "error: the prediction ended with exit code {}; nothing was measured\n", predicted);
    return predicted == kExitOk ? kExitInterrupted : predicted;
  }
  std::cout << "\nMeasurement: the configured ports\n";
  const int code = run_configuration(measured);
  std::cerr << fmt::format(
      "prediction in {}, measurement in {}: etwire compare {} {} sets them side by side\n",
      prediction.out, out.string(), prediction.out, out.string());
  return code;
}

}  // namespace etwire::runner

#include "runner/predicted_run.h"

#include <fmt/format.h>

#include <filesystem>
#include <iostream>
#include <memory>
#include <string>

#include "cluster/session.h"
#include "config/fabric_config.h"
#include "control/load/device_profile.h"
#include "control/resolve/config_loader.h"
#include "control/resolve/twin_prediction.h"
#include "runner/exit_codes.h"
#include "runner/repeated_run.h"

namespace etwire::runner {

namespace {

// The lab's plan with a device profile's overrides before its own: what the prediction is
// derived from. nullptr after printing why it cannot be.
std::unique_ptr<const control::RunPlan> profiled_plan(const RunRequest& opts,
                                                      const std::vector<std::string>& profile) {
  control::LoadOptions options;
  options.overrides = profile;
  options.overrides.insert(options.overrides.end(), opts.overrides.begin(), opts.overrides.end());
  auto plan =
      std::make_unique<const control::RunPlan>(control::load_config_file(opts.config, options));
  if (plan->ok()) return plan;
  for (const control::Diagnostic& d : plan->diagnostics.items()) {
    std::cerr << control::format_diagnostic(d) << "\n";
  }
  std::cerr << fmt::format(
      "error: {}: invalid with the device profile's settings (they count as --set before the "
      "command line's); nothing was run\n",
      opts.config);
  return nullptr;
}

}  // namespace

std::optional<std::vector<std::string>> read_prediction_profile(
    const control::RunPlan& lab, const std::vector<std::string>& extra) {
  try {
    return control::prediction_profile(lab, extra);
  } catch (const control::DeviceProfileError& e) {
    std::cerr << "error: " << e.what() << " (fabric.profile)\n";
    return std::nullopt;
  }
}

int run_with_prediction(const RunRequest& opts, uint32_t repeats,
                        const std::vector<std::string>& profile) {
  if (cluster::Session::current().size() > 1) {
    std::cerr << "error: --predict is not built for a run split between emulator processes; run "
                 "the prediction on its own, with --set ports[N].backend=loopback for each port "
                 "entry\n";
    return kExitBadInput;
  }
  control::LoadOptions load_options;
  load_options.overrides = opts.overrides;
  const auto lab = std::make_shared<const control::RunPlan>(
      control::load_config_file(opts.config, load_options));
  RunRequest measured = opts;
  measured.plan = lab;
  // An invalid configuration is reported as a run reports it.
  if (!lab->ok()) return run_configuration(measured);
  if (control::all_ports_on_loopback(*lab)) {
    std::cerr << fmt::format(
        "error: {}: --predict: every port is a loopback port already, so the run is the fabric "
        "twin's prediction; leave --predict out\n",
        opts.config);
    return kExitBadInput;
  }
  RunRequest prediction = measured;
  prediction.no_metrics = true;
  const std::optional<std::vector<std::string>> settings = read_prediction_profile(*lab, profile);
  if (!settings) return kExitBadInput;
  std::unique_ptr<const control::RunPlan> profiled;
  if (!settings->empty()) {
    profiled = profiled_plan(opts, *settings);
    if (!profiled) return kExitBadInput;
  }
  prediction.plan = std::make_shared<const control::RunPlan>(control::derive_plan(
      profiled ? *profiled : *lab, control::twin_prediction(), load_options, lab.get()));
  const std::filesystem::path out =
      std::filesystem::path(opts.out.empty() ? lab->config.telemetry.output_dir : opts.out);
  prediction.out = (out / "prediction").string();
  // Refused before the prediction runs, not after it.
  if (const int code = check_results_kind(out, repeats > 1); code != kExitOk) return code;
  std::cout << fmt::format(
      "Prediction: the fabric twin ({}) in place of the device under test{}\n",
      config::topology_name(lab->config.fabric.topology),
      lab->config.fabric.profile.empty()
          ? ""
          : fmt::format(", modelled by the device profile {}", lab->config.fabric.profile));
  const int predicted =
      repeats > 1 ? run_series(prediction, repeats, prediction.out) : run_configuration(prediction);
  if (stop_was_requested() || (predicted != kExitOk && predicted != kExitFailure)) {
    std::cerr << fmt::format(
        "error: the prediction ended with exit code {}; nothing was measured\n", predicted);
    return predicted == kExitOk ? kExitInterrupted : predicted;
  }
  std::cout << "\nMeasurement: the configured ports\n";
  const int code = repeats > 1 ? run_series(measured, repeats, out) : run_configuration(measured);
  std::cerr << fmt::format(
      "prediction in {}, measurement in {}: etwire compare {} {} sets them side by side\n",
      prediction.out, out.string(), prediction.out, out.string());
  return code;
}

}  // namespace etwire::runner

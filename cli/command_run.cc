// `etwire run`: replays a configuration's jobs on the data plane and writes the results:
// summary.json, collectives.csv, flows.csv and qps.csv in the output directory, and the
// nccl-tests-style report on stdout. Serves Prometheus metrics while it runs (and for
// telemetry.metrics.linger after), and pushes them to a Pushgateway at the end when one is
// configured.
#include <fmt/format.h>

#include <filesystem>
#include <iostream>
#include <memory>
#include <set>
#include <string>

#include "cli/commands.h"
#include "cli/configured_run.h"
#include "cli/exit_codes.h"
#include "cluster/session.h"
#include "config/fabric_config.h"
#include "control/resolve/config_loader.h"

namespace etwire::cli {

namespace {

struct RunCommandOptions {
  RunRequest run;
  bool predict = false;
};

// `run --predict`: the same configuration on the fabric twin first, its ports turned into
// loopback ports of the same speeds on the twin its `fabric` section describes (the device under
// test), into <results>/prediction/; then the run on the configured ports into <results>.
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

}  // namespace

CommandAction add_run_command(CLI::App& app) {
  auto opts = std::make_shared<RunCommandOptions>();
  auto* cmd = app.add_subcommand(
      "run",
      "Replay every job of a run configuration on its ports (loopback ports: the fabric twin, in "
      "virtual time) and record flow and collective completion times, bandwidth and congestion "
      "counters. Writes summary.json, collectives.csv, flows.csv and qps.csv to the output "
      "directory and prints an nccl-tests-style report. Exit 0 when every job completed, 1 when "
      "flows failed, 2 for bad input, 3 when the run could not complete (nothing progressed, or "
      "the ranks' traces disagree; the diagnosis says what was stuck), 130 when interrupted "
      "(SIGINT, SIGTERM or SIGHUP; one inherited as ignored stays ignored).");
  cmd->add_option("config", opts->run.config, "The run configuration (YAML)")->required();
  cmd->add_option("-s,--set", opts->run.overrides,
                  "Override a key: KEY.PATH=VALUE, e.g. workload.iterations=10 (repeatable)")
      ->allow_extra_args(false);
  cmd->add_option("-o,--out", opts->run.out,
                  "Results directory (default: telemetry.output_dir of the configuration)");
  cmd->add_option("--watchdog", opts->run.watchdog,
                  "Stop with a diagnosis after this long without progress, in virtual time "
                  "(e.g. 500ms; default: run.watchdog of the configuration)");
  cmd->add_option("--time-scale", opts->run.time_scale,
                  "Virtual seconds replayed per wall-clock second: 1 = real time, 0.001 = a "
                  "thousand times slower, to watch a short run live (default: run.time_scale of "
                  "the configuration; 0 = as fast as possible)")
      ->check(CLI::Range(0.0, 1e6));
  cmd->add_option("--threads", opts->run.threads,
                  "Threads that run the fabric twin's partitions (fabric.partitions above 1; "
                  "default: one per core, at most one per partition). Results do not depend on "
                  "it")
      ->check(CLI::Range(1u, 4096u));
  cmd->add_flag("--no-metrics", opts->run.no_metrics,
                "Neither serve Prometheus metrics nor push them (telemetry.metrics is ignored)");
  cmd->add_flag("--no-progress", opts->run.no_progress, "No progress line on a terminal");
  cmd->add_flag("--predict", opts->predict,
                "First run the same configuration on the fabric twin, its ports made loopback "
                "ports of the same speeds on the twin the fabric section describes (the device "
                "under test), into <results>/prediction; then run on the configured ports into "
                "<results>");
  return [opts]() -> int {
    if (!opts->predict) return run_configuration(opts->run);
    return run_with_prediction(opts->run);
  };
}

}  // namespace etwire::cli

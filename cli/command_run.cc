// `etwire run`: replays a configuration's jobs on the data plane and writes the results:
// summary.json, collectives.csv, flows.csv and qps.csv in the output directory, and the
// nccl-tests-style report on stdout. Serves Prometheus metrics while it runs (and for
// telemetry.metrics.linger after), and pushes them to a Pushgateway at the end when one is
// configured.
#include <fmt/format.h>

#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "cli/time_scale_option.h"
#include "control/load/device_profile.h"
#include "control/resolve/config_loader.h"
#include "control/resolve/twin_prediction.h"
#include "runner/configured_run.h"
#include "runner/exit_codes.h"
#include "runner/predicted_run.h"
#include "runner/repeated_run.h"

namespace etwire::cli {

namespace {

struct RunCommandOptions {
  runner::RunRequest run;
  bool predict = false;
  uint32_t repeats = 1;
  std::string profile;
};

// Runs with a device profile: the prediction's model with --predict; the run's own when every
// port is on the twin already (the run is a prediction); refused for a run on devices alone.
int run_with_profile(RunCommandOptions& opts) {
  std::vector<std::string> profile;
  try {
    profile = control::read_device_profile(opts.profile);
  } catch (const control::DeviceProfileError& e) {
    std::cerr << "error: " << e.what() << "\n";
    return runner::kExitBadInput;
  }
  if (opts.predict) return runner::run_with_prediction(opts.run, opts.repeats, profile);
  control::LoadOptions options;
  options.overrides = opts.run.overrides;
  options.read_traces = false;
  const control::RunPlan plan = control::load_config_file(opts.run.config, options);
  if (plan.ok() && !control::all_ports_on_loopback(plan)) {
    std::cerr << fmt::format(
        "error: --profile: a device profile is the twin's model of the device under test; a run "
        "on {}'s devices uses it with --predict (or replay it as sent: etwire replay)\n",
        opts.run.config);
    return runner::kExitBadInput;
  }
  opts.run.overrides.insert(opts.run.overrides.begin(), profile.begin(), profile.end());
  return opts.repeats > 1 ? runner::run_repeatedly(opts.run, opts.repeats)
                          : runner::run_configuration(opts.run);
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
  add_time_scale_option(
      cmd, opts->run.time_scale,
      "Virtual seconds replayed per wall-clock second: 1 = real time, 0.001 = a "
      "thousand times slower, to watch a short run live (default: run.time_scale of "
      "the configuration; 0 = as fast as possible)");
  cmd->add_option("--threads", opts->run.threads,
                  "Threads that run the fabric twin's partitions (fabric.partitions above 1; "
                  "default: one per core, at most one per partition; under mpirun, the cores of "
                  "a host shared by its processes). Results do not depend on it")
      ->check(CLI::Range(1u, 4096u));
  cmd->add_flag("--no-metrics", opts->run.no_metrics,
                "Neither serve Prometheus metrics nor push them (telemetry.metrics is ignored)");
  cmd->add_flag("--no-progress", opts->run.no_progress,
                "No progress line (rewritten every second on a terminal, else printed every "
                "10 s)");
  cmd->add_flag("--predict", opts->predict,
                "First run the same configuration on the fabric twin, its ports made loopback "
                "ports of the same speeds on the twin the fabric section describes (the device "
                "under test), into <results>/prediction; then run on the configured ports into "
                "<results>");
  cmd->add_option("--repeat", opts->repeats,
                  "Run the configuration N times, repeat K into <results>/repeat-K with run.seed "
                  "+ K - 1, listed in <results>/repeats.json; prints one line per repeat, then "
                  "each metric's mean and spread over the repeats. etwire compare takes such a "
                  "directory as repeated runs. With --predict, the prediction is repeated too "
                  "(default: 1, a single run into <results>)")
      ->check(CLI::Range(1u, 1000u));
  cmd->add_option("--profile", opts->profile,
                  "A device profile (etwire calibrate writes one): the fabric twin's model of the "
                  "device under test, for the prediction with --predict, or for a run whose ports "
                  "are all on the twin; applied after the one the configuration names "
                  "(fabric.profile) and before --set")
      ->check(CLI::ExistingFile);
  return [opts]() -> int {
    if (!opts->profile.empty()) return run_with_profile(*opts);
    if (opts->predict) return runner::run_with_prediction(opts->run, opts->repeats);
    if (opts->repeats > 1) return runner::run_repeatedly(opts->run, opts->repeats);
    return runner::run_configuration(opts->run);
  };
}

}  // namespace etwire::cli

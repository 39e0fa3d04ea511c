// `etwire run`: replays a configuration's jobs on the data plane and writes the results:
// summary.json, collectives.csv, flows.csv and qps.csv in the output directory, and the
// nccl-tests-style report on stdout. Serves Prometheus metrics while it runs (and for
// telemetry.metrics.linger after), and pushes them to a Pushgateway at the end when one is
// configured.
#include <memory>

#include "cli/commands.h"
#include "cli/time_scale_option.h"
#include "runner/configured_run.h"
#include "runner/predicted_run.h"
#include "runner/repeated_run.h"

namespace etwire::cli {

namespace {

struct RunCommandOptions {
  runner::RunRequest run;
  bool predict = false;
  uint32_t repeats = 1;
};

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
  return [opts]() -> int {
    if (opts->predict) return runner::run_with_prediction(opts->run, opts->repeats);
    if (opts->repeats > 1) return runner::run_repeatedly(opts->run, opts->repeats);
    return runner::run_configuration(opts->run);
  };
}

}  // namespace etwire::cli

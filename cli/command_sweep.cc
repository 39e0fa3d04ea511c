// `etwire sweep`: nccl-tests' size sweep on a run configuration's ports (runner/sweep_run.h runs
// it): the command's options.
#include <memory>

#include "cli/commands.h"
#include "cli/time_scale_option.h"
#include "collectives/algorithm.h"
#include "runner/sweep_run.h"

namespace etwire::cli {

CommandAction add_sweep_command(CLI::App& app) {
  auto opts = std::make_shared<runner::SweepOptions>();
  auto* cmd = app.add_subcommand(
      "sweep",
      "Sweep collective sizes as nccl-tests does, on a run configuration's ports: for each "
      "collective, algorithm and size, a generated one-collective trace set for the "
      "configuration's rank count runs in place of its jobs, mapped as its first job. Prints "
      "the nccl-tests table of every collective and algorithm and the alpha-beta fit of its "
      "times; writes sweep.json (nccl-tests' JSON shape), sweep.csv and every run's results "
      "under runs/. Exit 0 when every run completed, 1 when flows failed, 2 for bad input "
      "(checked before the first run), 3 when a run could not complete, 130 when interrupted.");
  cmd->add_option("config", opts->config, "The run configuration (YAML)")->required();
  cmd->add_option("-c,--collectives", opts->flags.collectives,
                  "Collectives to sweep, comma-separated: all_reduce, all_gather, "
                  "reduce_scatter, all_to_all, broadcast, reduce, gather, scatter, "
                  "reduce_scatter_block, send_recv (rank r sends to r+1)")
      ->capture_default_str();
  cmd->add_option("-a,--algorithms", opts->flags.algorithms,
                  "Algorithms, comma-separated (" + collectives::algorithm_names() +
                      ", or auto: the tuner's pick per size for all_reduce, all_gather and "
                      "reduce_scatter); each collective runs those it supports (default: the "
                      "one collectives.algorithms gives it, else its default)");
  cmd->add_option("-b,--min-bytes", opts->flags.min_bytes,
                  "Smallest size: the collective's full buffer, nccl-tests' size (e.g. 8, 1KiB)")
      ->capture_default_str();
  cmd->add_option("-e,--max-bytes", opts->flags.max_bytes,
                  "Largest size (e.g. 64MiB, 1GiB; at most 16GiB)")
      ->capture_default_str();
  cmd->add_option("-f,--step-factor", opts->flags.step_factor,
                  "Each size is the previous one times this (2 or more)")
      // An unsigned option takes -2 as 2^64 - 2.
      ->check(CLI::Validator(
          [](const std::string& text) {
            return text.starts_with('-') ? text + ": expected 2 or more" : std::string();
          },
          ""))
      ->capture_default_str();
  cmd->add_option("-n,--iterations", opts->iterations,
                  "Measured collectives per size (the job's iterations)")
      ->capture_default_str();
  cmd->add_option("-w,--warmup-iterations", opts->warmup_iterations,
                  "Collectives per size before the measured ones, not reported")
      ->capture_default_str();
  cmd->add_option("-s,--set", opts->overrides,
                  "Override a key of the configuration for every run: KEY.PATH=VALUE "
                  "(repeatable)")
      ->allow_extra_args(false);
  cmd->add_option("-o,--out", opts->out,
                  "Sweep directory: sweep.json, sweep.csv, runs/ and traces/ (default: "
                  "<telemetry.output_dir>/sweep)");
  cmd->add_option("--watchdog", opts->watchdog,
                  "Stop a run with a diagnosis after this long without progress (default: "
                  "run.watchdog of the configuration)");
  add_time_scale_option(cmd, opts->time_scale,
                        "Virtual seconds replayed per wall-clock second on the twin (default: "
                        "run.time_scale of the configuration)");
  return [opts]() -> int { return runner::run_sweep(*opts); };
}

}  // namespace etwire::cli

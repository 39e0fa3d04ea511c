#include "runner/sweep_run.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <iostream>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "cluster/session.h"
#include "collectives/nccl_sizes.h"
#include "common/duration.h"
#include "common/units.h"
#include "config/fabric_config.h"
#include "control/load/job_substitute.h"
#include "control/resolve/config_loader.h"
#include "outputs/result_tables.h"
#include "outputs/results_files.h"
#include "outputs/sweep_files.h"
#include "outputs/sweep_report.h"
#include "runner/configured_run.h"
#include "runner/emulator_processes.h"
#include "runner/exit_codes.h"
#include "runner/results_lock.h"
#include "trace/synth/synth.h"

namespace etwire::runner {

namespace {

// One run of the sweep: a series' size.
struct SweepRun {
  const SweepSeries* series = nullptr;
  uint64_t requested_bytes = 0;
  uint64_t bytes = 0;
  std::string name;   // "<collective>-<algorithm>-<bytes>": its results directory under runs/
  std::string trace;  // the trace set it replays
  // The configuration's plan changed to replay the run's trace set with its algorithm.
  control::PlanChange change;
  RunRequest request;  // with the plan derived by `change`, once check_runs resolved it
};

// Where the trace set of a collective and size goes: generated once, replayed by every algorithm.
std::filesystem::path trace_prefix(const std::filesystem::path& traces,
                                   collectives::CollectiveKind kind, uint64_t bytes) {
  const std::string label = outputs::collective_type_label(kind);
  return traces / fmt::format("{}-{}", label, bytes) / label;
}

// Writes the trace set unless an earlier run of the sweep did.
void write_trace_set(const std::filesystem::path& prefix, collectives::CollectiveKind kind,
                     uint64_t comm_size, uint32_t ranks, std::set<std::string>& written) {
  if (!written.insert(prefix.string()).second) return;
  std::filesystem::create_directories(prefix.parent_path());
  synth::MicrobenchSpec spec;
  spec.collective = kind;
  spec.bytes = comm_size;
  spec.ranks = static_cast<int32_t>(ranks);
  // One collective per trace iteration: the run replays it -w and then -n times.
  spec.iterations = 1;
  synth::write_microbench(spec, prefix.string());
}

// The series' algorithm as -a and collectives.algorithms name it: "auto" when tuned.
std::string series_algorithm_name(const SweepSeries& series) {
  return series.tuned ? "auto" : std::string(collectives::algorithm_name(series.algorithm));
}

// "sweep: all_reduce ring 4 MiB (7/24)": on a terminal one line rewritten per run, otherwise one
// line each.
void show_progress(const SweepRun& run, size_t index, size_t total, bool terminal) {
  const std::string line =
      fmt::format("sweep: {} {} {} ({}/{})", outputs::collective_type_label(run.series->kind),
                  series_algorithm_name(*run.series), format_bytes(run.bytes), index + 1, total);
  if (terminal) {
    // \x1b[K clears what a longer previous line left.
    std::cerr << '\r' << line << "\x1b[K" << std::flush;
  } else {
    std::cerr << line << '\n';
  }
}

// The figures of the run's instances of the swept collective (the only one its trace holds).
std::optional<outputs::CollectiveMeans> measured_means(const engine::RunResults& results,
                                                       collectives::CollectiveKind kind) {
  for (const outputs::CollectiveMeans& m : outputs::measured_collective_means(results)) {
    if (m.kind == kind) return m;
  }
  return std::nullopt;
}

// Per rank, the time it spent in communication in each measured iteration every rank finished,
// in microseconds: a one-collective microbenchmark's iteration is that collective.
std::vector<std::vector<double>> rank_iteration_times(const engine::RunResults& results,
                                                      uint32_t ranks) {
  std::vector<std::vector<double>> times(ranks);
  for (const engine::IterationRecord& iteration : results.iterations) {
    if (iteration.job != 0 || iteration.warmup || iteration.ranks.size() != ranks) continue;
    for (uint32_t r = 0; r < ranks; ++r) {
      times[r].push_back(static_cast<double>(iteration.ranks[r].comm_ns) / 1e3);
    }
  }
  return times;
}

// Every run's plan derived from the configuration's and checked before the first runs, as
// `validate` checks it: exit 2 (with the diagnostics) at the first that is not valid.
int check_runs(const control::RunPlan& base, std::vector<SweepRun>& runs) {
  const cluster::Session& session = cluster::Session::current();
  // The runs of one trace set (each algorithm's) share it, opened once.
  std::map<std::string, const control::RunPlan*> by_trace;
  for (SweepRun& run : runs) {
    const control::RunPlan*& earlier = by_trace[run.trace];
    run.request.plan = std::make_shared<const control::RunPlan>(
        control::derive_plan(base, run.change, {}, earlier));
    if (run.request.plan->ok()) earlier = run.request.plan.get();
    const control::RunPlan& loaded = *run.request.plan;
    if (const int code = settle_loaded_config(
            session, run.request.config, loaded, loaded.ok() && loaded.addresses,
            fmt::format("{}: invalid for the sweep's run {} (the microbenchmark in place of its "
                        "jobs); nothing was run",
                        run.request.config, run.name));
        code != kExitOk) {
      return code;
    }
  }
  return kExitOk;
}

// Nonzero exit codes rank: an interrupted sweep first, then bad input, a stuck run, a failed one.
int worse_exit_code(int current, int code) {
  const auto rank = [](int c) {
    switch (c) {
      case kExitOk:
        return 0;
      case kExitFailure:
        return 1;
      case kExitStuck:
        return 2;
      case kExitBadInput:
        return 3;
      case kExitInterrupted:
        return 4;
      default:
        return 1;
    }
  };
  return rank(code) > rank(current) ? code : current;
}

// The sweep's flags read and checked; exit 2 (after saying why) when one is not valid.
int read_request(const SweepOptions& opts, SweepRequest& request) {
  try {
    request = read_sweep_flags(opts.flags);
  } catch (const SweepInputError& e) {
    std::cerr << fmt::format("error: {}\n", e.what());
    return kExitBadInput;
  }
  if (!opts.watchdog.empty()) {
    const auto watchdog = parse_duration_ns(opts.watchdog);
    if (!watchdog || *watchdog == 0) {
      std::cerr << fmt::format(
          "error: --watchdog {}: expected a positive duration such as 500ms or 10s\n",
          opts.watchdog);
      return kExitBadInput;
    }
  }
  if (opts.iterations == 0) {
    std::cerr << "error: -n/--iterations: expected 1 or more measured iterations\n";
    return kExitBadInput;
  }

  return kExitOk;
}

// The configuration changed for a run of `series`: its algorithm or `auto` (send/recv runs one,
// so the configuration has no key for it), and the run's trace set in place of the jobs.
control::PlanChange point_change(const SweepSeries& series, const control::JobSubstitute& trace) {
  control::PlanChange change;
  const collectives::CollectiveKind kind = series.kind;
  const collectives::Algorithm algorithm = series.algorithm;
  const bool tuned = series.tuned;
  if (kind) {
    change.settings.push_back(fmt::format("collectives.algorithms.{}={}",
                                          outputs::collective_type_label(kind),
                                          series_algorithm_name(series)));
  }
  change.settings.push_back(control::substitute_setting(trace));
  change.apply = [kind, algorithm, tuned, trace](config::RunConfig& config) {
    if (kind) {
      const auto type = static_cast<size_t>(*kind);
      config.collectives.tuned_algorithms[type] = tuned;
      config.collectives.algorithms[type] =
          tuned ? std::nullopt : std::optional<collectives::Algorithm>(algorithm);
    }
    control::substitute_job(config, trace);
  };
  return change;
}

// Every run of the sweep, its trace set written under <out>/traces (once per collective and
// size). Throws what writing a trace set throws.
std::vector<SweepRun> prepare_runs(const SweepOptions& opts, const SweepPlan& plan,
                                   const config::RunConfig& config, uint32_t ranks,
                                   const std::filesystem::path& out) {
  std::vector<SweepRun> runs;
  std::set<std::string> trace_sets;
  for (const SweepSeries& series : plan.series) {
    for (const auto& [requested, bytes] : series.sizes) {
      SweepRun run;
      run.series = &series;
      run.requested_bytes = requested;
      run.bytes = bytes;
      run.name = fmt::format("{}-{}-{}", outputs::collective_type_label(series.kind),
                             series_algorithm_name(series), bytes);
      const std::filesystem::path prefix = trace_prefix(out / "traces", series.kind, bytes);
      write_trace_set(
          prefix, series.kind,
          collectives::comm_size_for(series.kind, bytes, ranks, config.workload.comm_size), ranks,
          trace_sets);
      run.request.config = opts.config;
      run.request.overrides = opts.overrides;
      run.trace = prefix.string();
      run.change = point_change(
          series, control::JobSubstitute{prefix.string(), opts.iterations, opts.warmup_iterations});
      run.request.out = (out / "runs" / run.name).string();
      run.request.watchdog = opts.watchdog;
      run.request.time_scale = opts.time_scale;
      // One line of progress per run, from the sweep; each run would serve the metrics
      // endpoint in turn.
      run.request.no_progress = true;
      run.request.no_metrics = true;
      run.request.quiet = true;
      runs.push_back(std::move(run));
    }
  }
  return runs;
}

// Runs every point in turn, into `sweep`; a run stopped before one (Ctrl-C, bad input) leaves
// the rest "not run". Returns the worst exit code.
int run_points(std::vector<SweepRun>& runs, outputs::SweepResults& sweep) {
  const bool terminal = isatty(STDERR_FILENO) != 0;
  int code = kExitOk;
  for (size_t i = 0; i < runs.size(); ++i) {
    SweepRun& run = runs[i];
    outputs::SweepPoint& point = sweep.points.emplace_back();
    point.kind = run.series->kind;
    point.algorithm = run.series->algorithm;
    point.tuned = run.series->tuned;
    point.requested_bytes = run.requested_bytes;
    point.bytes = run.bytes;
    // A run stopped before it (Ctrl-C, bad input) leaves the rest "not run", without a directory.
    if (code == kExitInterrupted || code == kExitBadInput) continue;
    point.run_dir = (std::filesystem::path("runs") / run.name).string();
    show_progress(run, i, runs.size(), terminal);
    run.request.on_results = [&](const engine::RunResults& results) {
      point.status = std::string(engine::run_status_name(results.status));
      point.flows = results.flows;
      point.failed_flows = results.failed_flows;
      point.measured = measured_means(results, point.kind);
      for (const engine::CollectiveRecord& record : results.collectives) {
        if (record.kind == point.kind && !record.warmup) {
          point.protocol = record.protocol;
          if (point.tuned) point.picked = record.algorithm;
          break;
        }
      }
      point.rank_iteration_us = rank_iteration_times(results, sweep.ranks);
      if (sweep.goodput_bytes_per_second == 0) {
        sweep.goodput_bytes_per_second = results.goodput_bytes_per_second;
      }
      for (const std::string& note : results.notes) {
        if (std::find(sweep.notes.begin(), sweep.notes.end(), note) == sweep.notes.end()) {
          sweep.notes.push_back(note);
        }
      }
    };
    point.exit_code = run_configuration(run.request);
    if (point.exit_code != kExitOk) {
      // The line the run's errors follow on a terminal ends here.
      if (terminal) std::cerr << '\n';
      sweep.errors.push_back(
          fmt::format("{}: exit code {}, status {}", run.name, point.exit_code, point.status));
    }
    code = worse_exit_code(code, point.exit_code);
    if (stop_was_requested()) code = kExitInterrupted;
  }
  if (terminal) std::cerr << '\n';
  sweep.end_time = outputs::sweep_time_now();
  return code;
}

// Prints the sweep's report and writes sweep.json and sweep.csv; returns `code`, or a failure.
int write_sweep(const outputs::SweepResults& sweep, const std::filesystem::path& out, int code) {
  std::cout << outputs::sweep_report(sweep) << std::flush;
  const std::filesystem::path series = out / "series";
  try {
    std::filesystem::create_directories(series);
    outputs::write_sweep_json(sweep, (out / "sweep.json").string(), series.string());
    outputs::write_sweep_csv(sweep, (out / "sweep.csv").string());
  } catch (const std::exception& e) {
    std::cerr << fmt::format("error: {}\n", e.what());
    return worse_exit_code(code, kExitFailure);
  }
  std::cerr << fmt::format("wrote {}, {} and a file per series in {}\n",
                           (out / "sweep.json").string(), (out / "sweep.csv").string(),
                           series.string());
  return code;
}

}  // namespace

int run_sweep(const SweepOptions& opts) {
  const cluster::Session& session = cluster::Session::current();
  if (session.size() > 1) {
    std::cerr << "error: sweep is not built for a run split between emulator processes; sweep "
                 "without mpirun, or run each size with etwire run\n";
    return kExitBadInput;
  }
  SweepRequest request;
  if (const int code = read_request(opts, request); code != kExitOk) return code;

  // The configuration as given: valid, and the rank count of its first job.
  control::LoadOptions load_options;
  load_options.overrides = opts.overrides;
  const control::RunPlan loaded = control::load_config_file(opts.config, load_options);
  if (loaded.ok() && !launcher_needed(loaded.config).empty()) {
    std::cerr << fmt::format(
        "error: {}: its ports are split between {} emulator processes, and sweep is not built for "
        "a run split between them; run each size with etwire run under mpirun\n",
        opts.config, loaded.config.emulators.size());
    return kExitBadInput;
  }
  if (const int code =
          settle_loaded_config(session, opts.config, loaded, loaded.ok() && loaded.addresses,
                               fmt::format("{}: invalid: {} error{}; nothing was run", opts.config,
                                           loaded.diagnostics.error_count(),
                                           loaded.diagnostics.error_count() == 1 ? "" : "s"));
      code != kExitOk) {
    return code;
  }
  const config::RunConfig& config = loaded.config;
  if (loaded.traces.empty() || !loaded.traces[0]) {
    std::cerr << fmt::format("error: {}: the first job's trace set could not be read\n",
                             opts.config);
    return kExitBadInput;
  }
  const auto ranks = static_cast<uint32_t>(loaded.traces[0]->world_size);
  SweepPlan plan;
  try {
    plan = plan_sweep(request, ranks, config.collectives);
  } catch (const SweepInputError& e) {
    std::cerr << fmt::format("error: {}\n", e.what());
    return kExitBadInput;
  }
  for (const std::string& note : plan.notes) std::cerr << fmt::format("note: {}\n", note);

  const std::filesystem::path out = std::filesystem::absolute(
      opts.out.empty() ? std::filesystem::path(config.telemetry.output_dir) / "sweep"
                       : std::filesystem::path(opts.out));
  ResultsLock lock;  // two sweeps into one directory would write each other's traces and runs
  if (const int code = hold_results_directory(out, lock); code != kExitOk) return code;
  std::vector<SweepRun> runs;
  try {
    runs = prepare_runs(opts, plan, config, ranks, out);
  } catch (const std::exception& e) {
    std::cerr << fmt::format("error: {}: cannot write the sweep's trace sets: {}\n",
                             (out / "traces").string(), e.what());
    return kExitFailure;
  }
  if (const int code = check_runs(loaded, runs); code != kExitOk) return code;

  outputs::SweepResults sweep;
  sweep.config_file = opts.config;
  sweep.run_name = config.run.name;
  sweep.topology = std::string(config::topology_name(config.fabric.topology));
  sweep.ranks = ranks;
  sweep.ranks_per_host =
      config.mapping.jobs.empty() ? 1 : config.mapping.jobs[0].hosts.ranks_per_host;
  sweep.min_bytes = request.min_bytes;
  sweep.max_bytes = request.max_bytes;
  sweep.step_factor = request.step_factor;
  sweep.iterations = opts.iterations;
  sweep.warmup_iterations = opts.warmup_iterations;
  sweep.start_time = outputs::sweep_time_now();
  std::cerr << fmt::format("sweeping {}: {} run{} on {} ranks; results in {}\n", config.run.name,
                           runs.size(), runs.size() == 1 ? "" : "s", ranks, out.string());

  const int code = run_points(runs, sweep);
  return write_sweep(sweep, out, code);
}

}  // namespace etwire::runner

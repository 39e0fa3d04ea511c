#include "runner/repeated_run.h"

#include <fmt/format.h>

#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "cluster/session.h"
#include "control/resolve/config_loader.h"
#include "engine/run_results.h"
#include "outputs/compare/comparison_report.h"
#include "outputs/compare/run_digest.h"
#include "outputs/repeat_series.h"
#include "runner/exit_codes.h"
#include "runner/results_lock.h"

namespace etwire::runner {

namespace {

// Repeat K's plan: the base plan with run.seed + K - 1 (repeat 1 is the base plan itself, so it
// is the very run a plain `etwire run` makes).
std::shared_ptr<const control::RunPlan> repeat_plan(
    const std::shared_ptr<const control::RunPlan>& base, uint64_t seed, uint32_t repeat) {
  if (repeat == 1) return base;
  control::PlanChange change;
  change.apply = [seed](config::RunConfig& config) { config.run.seed = seed; };
  change.settings = {fmt::format("run.seed={}", seed)};
  return std::make_shared<const control::RunPlan>(control::derive_plan(*base, change));
}

// What a repeat's line says of its results (the results themselves stay in its directory).
struct RepeatOutcome {
  engine::RunStatus status = engine::RunStatus::kCompleted;
  clock::Nanos end_time = 0;
  bool wall_clock = false;
  uint64_t flows = 0;
  uint64_t failed_flows = 0;
};

std::string repeat_line(uint32_t repeat, uint32_t repeats, uint64_t seed,
                        const std::optional<RepeatOutcome>& outcome, int code,
                        const std::string& dir) {
  std::string what = fmt::format("exit code {}, no results written", code);
  if (outcome) {
    what = fmt::format(
        "{}, ended at {:.3f} ms of {} time{}", engine::run_status_name(outcome->status),
        static_cast<double>(outcome->end_time) / 1e6,
        outcome->wall_clock ? "wall-clock" : "virtual",
        outcome->failed_flows > 0
            ? fmt::format(", {} of {} flows failed", outcome->failed_flows, outcome->flows)
            : "");
  }
  return fmt::format("repeat {} of {} (seed {}): {}; results in {}\n", repeat, repeats, seed, what,
                     dir);
}

// The spread of every metric over the finished repeats, read back from their summary.json.
void print_spread(const std::vector<std::filesystem::path>& dirs) {
  try {
    std::vector<outputs::RunDigest> runs;
    for (const std::filesystem::path& dir : dirs) runs.push_back(outputs::read_run_digest(dir));
    std::cout << fmt::format(
                     "\n{} repeats: mean, sample standard deviation (+-) and cv_% (+- over "
                     "mean) of each metric\n",
                     runs.size())
              << outputs::repeat_spread_text(runs) << std::flush;
  } catch (const outputs::CompareInputError& e) {
    std::cerr << fmt::format("warning: no spread of the repeats: {}\n", e.what());
  }
}

}  // namespace

int check_results_kind(const std::filesystem::path& out, bool series) {
  std::error_code error;
  const char* other = series ? "summary.json" : outputs::kRepeatsFile;
  if (!std::filesystem::exists(out / other, error)) return kExitOk;
  std::cerr << fmt::format(
      "error: {}: holds {}; give {} another --out, or remove the earlier results\n",
      (out / other).string(),
      series ? "the results of a single run" : "the repeats of an earlier `etwire run --repeat`",
      series ? "the repeated run" : "this run");
  return kExitBadInput;
}

int run_series(const RunRequest& request, uint32_t repeats, const std::filesystem::path& out) {
  if (const int code = check_results_kind(out, true); code != kExitOk) return code;
  ResultsLock lock;  // the series' directory, held until every repeat is written
  if (const int code = hold_results_directory(out, lock); code != kExitOk) return code;
  const uint64_t base_seed = request.plan->config.run.seed;
  std::cerr << fmt::format("running {} {} times; results in {}/repeat-1 to repeat-{}\n",
                           request.plan->config.run.name, repeats, out.string(), repeats);
  std::vector<outputs::RepeatEntry> done;
  std::vector<std::filesystem::path> dirs;
  int series_code = kExitOk;
  for (uint32_t repeat = 1; repeat <= repeats; ++repeat) {
    const uint64_t seed = base_seed + repeat - 1;
    RunRequest one = request;
    one.plan = repeat_plan(request.plan, seed, repeat);
    one.out = (out / outputs::repeat_dir_name(repeat)).string();
    one.quiet = true;
    std::optional<RepeatOutcome> outcome;
    one.on_results = [&outcome](const engine::RunResults& r) {
      outcome = RepeatOutcome{r.status, r.end_time, r.wall_clock, r.flows, r.failed_flows};
    };
    const int code = run_configuration(one);
    std::cout << repeat_line(repeat, repeats, seed, outcome, code, one.out) << std::flush;
    if (outcome) {
      // Only a repeat that wrote its results is listed; compare reads every one listed.
      done.push_back({repeat, seed, code});
      dirs.push_back(one.out);
      try {
        outputs::write_repeats_json(out, repeats, done);
      } catch (const std::runtime_error& e) {
        std::cerr << fmt::format("error: {}\n", e.what());
        return kExitFailure;
      }
    }
    if (series_code == kExitOk) series_code = code;
    const std::string listed = fmt::format("{} lists the {} repeat{} that wrote results",
                                           (out / outputs::kRepeatsFile).string(), done.size(),
                                           done.size() == 1 ? "" : "s");
    if (stop_was_requested()) {
      std::cerr << fmt::format(
          "error: interrupted in or after repeat {} of {}, so the series "
          "stops; {}\n",
          repeat, repeats, listed);
      return kExitInterrupted;
    }
    if (code != kExitOk && code != kExitFailure) {
      std::cerr << fmt::format(
          "error: repeat {} ended with exit code {}, so the series stops; {}\n", repeat, code,
          listed);
      return code;
    }
  }
  if (!dirs.empty()) print_spread(dirs);
  return series_code;
}

int run_repeatedly(const RunRequest& request, uint32_t repeats) {
  if (cluster::Session::current().size() > 1) {
    std::cerr << "error: --repeat is not built for a run split between emulator processes; run "
                 "the split run in a loop, each time with its own --out, and compare the "
                 "directories (etwire compare A1,A2,A3 B1,B2,B3)\n";
    return kExitBadInput;
  }
  RunRequest base = request;
  if (!base.plan) {
    control::LoadOptions load_options;
    load_options.overrides = request.overrides;
    base.plan = std::make_shared<const control::RunPlan>(
        control::load_config_file(request.config, load_options));
  }
  // An invalid configuration is reported as a run reports it.
  if (!base.plan->ok()) return run_configuration(base);
  const std::filesystem::path out(request.out.empty() ? base.plan->config.telemetry.output_dir
                                                      : request.out);
  return run_series(base, repeats, out);
}

}  // namespace etwire::runner

// `etwire sweep` as runs: nccl-tests' size sweep on a run configuration's ports. For each
// collective, algorithm and size it writes a one-collective microbenchmark trace set for the
// configuration's rank count and runs it in place of the configuration's jobs (mapped as its
// first job), each run into its own results directory; then prints the nccl-tests table of every
// series and the alpha-beta fit of its times, and writes sweep.json and sweep.csv.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "runner/sweep_plan.h"

namespace etwire::runner {

struct SweepOptions {
  std::string config;
  std::vector<std::string> overrides;
  std::string out;
  std::string watchdog;
  std::optional<double> time_scale;
  SweepFlags flags;
  uint32_t iterations = 20;
  uint32_t warmup_iterations = 5;
};

// Returns the exit code (exit_codes.h): the worst of the runs', every run checked before the
// first starts.
int run_sweep(const SweepOptions& opts);

}  // namespace etwire::runner

// The progress of `etwire run` on stderr. On a terminal one line, rewritten about once a second:
// collective instances done of those the traces hold, the share done, the time left at the pace
// so far, the run clock and what the ports send. Elsewhere (a log, a pipe, CI) the same as a
// plain line of its own every kPlainEvery, so that a long run in a log shows it is alive without
// filling the log.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "control/plan/run_plan.h"
#include "engine/run_engine.h"

namespace etwire::runner {

// The collective instances (send/recv pairs included) a run of the plan records: per job, each
// process group's collectives (as one member issues them) and every send, times its warm-up and
// measured iterations. 0 when a job's trace facts were not read.
uint64_t expected_instances(const control::RunPlan& plan);

class RunProgress {
 public:
  static constexpr std::chrono::seconds kPlainEvery{10};

  // `total` 0: unknown, the line shows counts without a share or the time left.
  RunProgress(uint64_t total, bool terminal);

  // The engine's progress callback (RunOptions::progress); `context` is the RunProgress.
  static void report(const engine::ProgressSample& sample, void* context);

  bool terminal() const { return terminal_; }

  // The line for `sample`, `elapsed` of wall time into the run; updates the ports' rates.
  std::string line(const engine::ProgressSample& sample, std::chrono::duration<double> elapsed);

 private:
  uint64_t total_;
  bool terminal_;
  std::chrono::steady_clock::time_point started_;
  std::chrono::steady_clock::time_point last_plain_;
  // The previous sample's clock and bytes sent per port: rates are over the time between two.
  clock::Nanos previous_now_ = -1;
  std::vector<uint64_t> previous_tx_;
};

}  // namespace etwire::runner

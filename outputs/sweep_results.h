// What `etwire sweep` measured: one point per collective, algorithm and size, each a run of the
// configuration replaying a generated one-collective microbenchmark, with the figures its console
// table gives (outputs/result_tables.h), and per collective and algorithm the alpha-beta fit of
// time against size (collectives/alpha_beta_fit.h).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "collectives/algorithm.h"
#include "collectives/alpha_beta_fit.h"
#include "config/protocol.h"
#include "outputs/result_tables.h"

namespace etwire::outputs {

struct SweepPoint {
  collectives::CollectiveKind kind;
  collectives::Algorithm algorithm = collectives::Algorithm::kRing;  // the series' unless tuned
  // The series is `auto` (collectives.algorithms or -a auto): the tuner picks per size, and
  // `picked` is what the measured instances ran (nullopt when none completed).
  bool tuned = false;
  std::optional<collectives::Algorithm> picked;
  uint64_t requested_bytes = 0;  // the size the steps reached
  uint64_t bytes = 0;            // rounded as nccl-tests rounds it: the full buffer F
  std::string run_dir;  // the run's results, relative to the sweep's directory; "" when not run
  // The run's status as summary.json gives it ("completed", "stuck", ...); "not run" when the
  // sweep stopped before it.
  std::string status = "not run";
  int exit_code = 0;
  uint64_t flows = 0;
  uint64_t failed_flows = 0;
  // Of the run's measured instances of the collective; nullopt when none completed.
  std::optional<CollectiveMeans> measured;
  // The protocol the measured instances ran (collectives.protocol; under auto, the tuner's pick
  // for the size); nullopt when none completed.
  std::optional<config::Protocol> protocol;
  // Per rank, per measured iteration that every rank completed: the rank's own time in the
  // collective, from its arrival to the end of its part, in microseconds (what an nccl-tests
  // process times for itself).
  std::vector<std::vector<double>> rank_iteration_us;
};

struct SweepResults {
  std::string config_file;
  std::string run_name;
  std::string topology;
  uint32_t ranks = 0;
  uint32_t ranks_per_host = 1;  // the job's mapping.hosts: host h holds ranks h*N to h*N+N-1
  uint64_t min_bytes = 0;
  uint64_t max_bytes = 0;
  uint64_t step_factor = 0;
  uint32_t iterations = 0;
  uint32_t warmup_iterations = 0;
  double goodput_bytes_per_second = 0;  // the slowest port's RoCE goodput (ideal %'s reference)
  std::string start_time;               // local time, "YYYY-MM-DD HH:MM:SS"
  std::string end_time;
  std::vector<SweepPoint> points;   // collective by collective, algorithm by algorithm, by size
  std::vector<std::string> errors;  // why runs did not complete
  std::vector<std::string> notes;   // the runs' notes, each once
};

// One collective and algorithm's points, fitted: time = alpha + bus bytes / beta, where bus bytes
// are the size times the collective's busbw factor, so beta compares with busbw and the link
// speed (beta / factor is the bandwidth of algbw's bytes). A collective whose factor is 0 (a
// barrier) or a series of fewer than two measured sizes has no fit.
struct SweepFit {
  collectives::CollectiveKind kind;
  collectives::Algorithm algorithm = collectives::Algorithm::kRing;
  bool tuned = false;  // the `auto` series of the collective: `algorithm` means nothing
  double busbw_factor = 0;
  std::optional<collectives::AlphaBetaFit> fit;
  // The mean busbw of the series' measured points (nccl-tests' "Avg bus bandwidth"); 0 when none.
  double average_busbw_gbps = 0;
};

// The (collective, algorithm) series of the points, in the order they first appear; a
// collective's `auto` points are one series whatever the tuner picked.
std::vector<SweepFit> fit_sweep(const SweepResults& sweep);

bool in_series(const SweepPoint& point, const SweepFit& series);
// The series a point belongs to, not fitted.
SweepFit series_of(const SweepPoint& point);
// "all_reduce-ring", "all_gather-auto".
std::string series_name(const SweepFit& series);
// The algorithm of a series ("auto" when tuned) and of a point (under `auto` the pick, or "auto"
// when nothing was measured).
std::string series_algorithm(const SweepFit& series);
std::string point_algorithm(const SweepPoint& point);

// "local time now" as SweepResults' times are written.
std::string sweep_time_now();

}  // namespace etwire::outputs

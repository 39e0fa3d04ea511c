// Two runs side by side (`etwire compare A B`): the same metrics of each, the delta B - A, the
// delta in percent of A, and whether it is beyond the tolerance. A is the reference: the twin's
// prediction against the lab's measurement, the old firmware against the new.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "outputs/compare/run_digest.h"
#include "outputs/compare/tolerances.h"

namespace etwire::outputs {

enum class ComparedSection {
  kCollectives,  // per collective type: CCT, busbw, ideal %
  kFct,          // per collective type: FCT percentiles
  kIterations,   // per job and measured iteration: JCT
  kCongestion,   // per counter, summed over the ports
};
const char* compared_section_name(ComparedSection section);  // "collectives", ...

struct ComparedMetric {
  ComparedSection section = ComparedSection::kCollectives;
  std::string subject;         // collective type, "JOB iteration N", or "" for a congestion counter
  std::string metric;          // a tolerance_metric_names() entry
  std::string unit;            // "us", "GB/s", "%", "ms", "" for counts
  std::optional<double> a, b;  // nullopt: the run does not have it
  // B - A and its percentage of A, when both runs have the metric. A = 0: 0 % when B is 0 too,
  // else no percentage (an infinite change, which any tolerance flags).
  std::optional<double> delta;
  std::optional<double> delta_percent;
  std::optional<double> tolerance_percent;
  bool exceeded = false;
  // Over repeated runs of a side (compare_repeats): the runs that have the metric and their
  // sample standard deviation, `a` and `b` being their means; and the 95 % confidence interval of
  // delta_percent, when the runs spread. A metric is then beyond its tolerance only when the
  // whole interval is.
  uint32_t a_runs = 0, b_runs = 0;
  double a_sd = 0, b_sd = 0;
  std::optional<std::pair<double, double>> delta_percent_ci;
};

struct RunComparison {
  std::string label_a, label_b;
  RunDigest a, b;  // each side's (first) run
  // Every run of each side, `a` and `b` first (compare_repeats); empty for one run a side.
  std::vector<std::filesystem::path> repeats_a, repeats_b;
  Tolerances tolerances;
  std::vector<ComparedMetric> metrics;
  std::vector<std::string> only_in_a, only_in_b;  // collective types one run lacks
  size_t exceeded() const;
};

// Compares `a` with `b`. Throws CompareInputError when the runs share no collective type, naming
// each run's types.
RunComparison compare_runs(RunDigest a, RunDigest b, const Tolerances& tolerances,
                           std::string label_a, std::string label_b);

// The labels of the two sides when none are given: the directories' names, or, where those are
// the same (a/results and b/results), the run names, else "A" and "B".
std::pair<std::string, std::string> default_labels(const RunDigest& a, const RunDigest& b);

}  // namespace etwire::outputs

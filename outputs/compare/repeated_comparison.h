// Repeated runs of each side compared (`etwire compare A1,A2,A3 B1,B2,B3`): one run's figures
// vary from run to run (a lab's JCT by tens of percent across iterations), so a gate on single
// samples flaps. Every metric is averaged over each side's runs, with its spread, and the delta
// carries a 95 % confidence interval (Welch's, repeat_statistics.h); a tolerance flags a metric
// only when the whole interval lies beyond it, as the runs then say the sides differ by more.
#pragma once

#include <string>
#include <vector>

#include "outputs/compare/run_comparison.h"

namespace etwire::outputs {

// `a` and `b`: every run of each side (at least one each). Rows are those of compare_runs of the
// two first runs; each run adds its value of each row where it has one. Throws CompareInputError
// as compare_runs does, for any pair of a side's run and the other side's first.
RunComparison compare_repeats(std::vector<RunDigest> a, std::vector<RunDigest> b,
                              const Tolerances& tolerances, std::string label_a,
                              std::string label_b);

}  // namespace etwire::outputs

// The statistics `etwire compare` takes over repeated runs of one side: each metric's mean and
// sample standard deviation over a side's runs, and a 95 % confidence interval of the difference
// of two sides' means by Welch's t-test (the two sides' spreads need not be equal: a twin's
// predictions barely vary, a lab's runs do).
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <utility>

namespace etwire::outputs {

struct SampleStats {
  uint32_t n = 0;
  double mean = 0;
  double sd = 0;  // sample standard deviation (n - 1); 0 for one sample
};
SampleStats sample_stats(std::span<const double> values);

// The two-sided 95 % quantile of Student's t with `df` degrees of freedom (df >= 1, not
// necessarily whole, as Welch's are): where the tails beyond +-t hold 5 %.
double student_t95(double df);

// The 95 % confidence interval of mean(b) - mean(a) (Welch). nullopt when neither side has a
// spread to go by (every side one sample, or runs that agree exactly): the difference is then
// taken as it is.
std::optional<std::pair<double, double>> difference_interval95(const SampleStats& a,
                                                               const SampleStats& b);

}  // namespace etwire::outputs

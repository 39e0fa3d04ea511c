// How far two runs may differ before `etwire compare` flags a metric: a default for every metric
// and any number of per-metric overrides, each a percentage of the first run's value
// (`--tolerance 5 --tolerance fct_p99=20`).
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace etwire::outputs {

// The names a per-metric tolerance may use: the compared metrics (cct, cct_p50, busbw, ideal,
// fct_p50, fct_p99, fct_max, jct, and the congestion counters by their summary.json names), and
// "congestion" for every congestion counter at once.
const std::vector<std::string>& tolerance_metric_names();

class Tolerances {
 public:
  // One --tolerance argument: "PCT" (every metric) or "METRIC=PCT", PCT a finite number >= 0.
  // Throws std::invalid_argument saying what is wrong, with the known metric names.
  void add(std::string_view argument);

  // The tolerance of `metric` in percent: its own, else that of its group ("congestion" for a
  // congestion counter), else the default; nullopt when none was given (the metric is not
  // checked).
  std::optional<double> of(const std::string& metric, bool congestion_counter) const;

  bool empty() const { return !all_ && per_metric_.empty(); }
  const std::optional<double>& all() const { return all_; }
  const std::map<std::string, double>& per_metric() const { return per_metric_; }

 private:
  std::optional<double> all_;
  std::map<std::string, double> per_metric_;
};

}  // namespace etwire::outputs

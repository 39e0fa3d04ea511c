#include "outputs/compare/repeated_comparison.h"

#include <cmath>
#include <map>
#include <tuple>
#include <utility>

#include "outputs/compare/repeat_statistics.h"

namespace etwire::outputs {

namespace {

using RowKey = std::tuple<ComparedSection, std::string, std::string>;

RowKey key_of(const ComparedMetric& m) {
  return {m.section, m.subject, m.metric};
}

// Each row's values over a side's runs.
using Samples = std::map<RowKey, std::vector<double>>;

void collect(const RunComparison& comparison, bool side_a, Samples& into) {
  for (const ComparedMetric& m : comparison.metrics) {
    const std::optional<double>& value = side_a ? m.a : m.b;
    if (value) into[key_of(m)].push_back(*value);
  }
}

// A row's figures from its samples, judged against its tolerance by the confidence interval.
void summarize(ComparedMetric& m, const std::vector<double>& a, const std::vector<double>& b) {
  const SampleStats sa = sample_stats(a), sb = sample_stats(b);
  m.a_runs = sa.n;
  m.b_runs = sb.n;
  m.a_sd = sa.sd;
  m.b_sd = sb.sd;
  m.a = sa.n > 0 ? std::optional<double>(sa.mean) : std::nullopt;
  m.b = sb.n > 0 ? std::optional<double>(sb.mean) : std::nullopt;
  m.delta.reset();
  m.delta_percent.reset();
  m.delta_percent_ci.reset();
  if (!m.a || !m.b) {
    m.exceeded = false;
    return;
  }
  m.delta = *m.b - *m.a;
  if (*m.a != 0) {
    m.delta_percent = *m.delta / std::fabs(*m.a) * 100.0;
  } else if (*m.b == 0) {
    m.delta_percent = 0.0;
  }
  if (const auto interval = difference_interval95(sa, sb); interval && *m.a != 0) {
    m.delta_percent_ci = std::pair{interval->first / std::fabs(*m.a) * 100.0,
                                   interval->second / std::fabs(*m.a) * 100.0};
  }
  if (!m.tolerance_percent) return;
  const double tolerance = *m.tolerance_percent;
  if (!m.delta_percent) {
    m.exceeded = true;  // from none: no finite tolerance covers it
  } else if (m.delta_percent_ci) {
    m.exceeded = m.delta_percent_ci->first > tolerance || m.delta_percent_ci->second < -tolerance;
  } else {
    m.exceeded = std::fabs(*m.delta_percent) > tolerance;
  }
}

}  // namespace

RunComparison compare_repeats(std::vector<RunDigest> a, std::vector<RunDigest> b,
                              const Tolerances& tolerances, std::string label_a,
                              std::string label_b) {
  RunComparison c = compare_runs(a.front(), b.front(), tolerances, label_a, label_b);
  if (a.size() == 1 && b.size() == 1) return c;
  Samples samples_a, samples_b;
  // A repeat stopped before it measured any collective (interrupted early: the command warns
  // of every run that did not complete) has no sample to give; it is listed, not compared.
  for (const RunDigest& run : a) {
    c.repeats_a.push_back(run.dir);
    if (run.collectives.empty()) continue;
    collect(compare_runs(run, b.front(), tolerances, label_a, label_b), true, samples_a);
  }
  for (const RunDigest& run : b) {
    c.repeats_b.push_back(run.dir);
    if (run.collectives.empty()) continue;
    collect(compare_runs(a.front(), run, tolerances, label_a, label_b), false, samples_b);
  }
  // (The instance count has no tolerance: compare_runs judges it never.)
  for (ComparedMetric& m : c.metrics) summarize(m, samples_a[key_of(m)], samples_b[key_of(m)]);
  return c;
}

}  // namespace etwire::outputs

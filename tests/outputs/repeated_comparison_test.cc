// `etwire compare` over repeated runs: the t quantiles against their known values, Welch's
// interval with known figures, and a gate that flags a metric only when the whole interval of its
// delta lies beyond the tolerance, where one run a side would flag a difference the runs' spread
// explains.
#include <gtest/gtest.h>

#include <cmath>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <vector>

#include "outputs/compare/comparison_report.h"
#include "outputs/compare/repeat_statistics.h"
#include "outputs/compare/repeated_comparison.h"

namespace etwire::outputs {
namespace {

TEST(RepeatStatistics, StudentQuantilesAtWholeAndWelchDegreesOfFreedom) {
  EXPECT_NEAR(student_t95(1), 12.7062, 1e-3);
  EXPECT_NEAR(student_t95(2), 4.3027, 1e-3);
  EXPECT_NEAR(student_t95(4), 2.7764, 1e-3);
  EXPECT_NEAR(student_t95(10), 2.2281, 1e-3);
  EXPECT_NEAR(student_t95(30), 2.0423, 1e-3);
  EXPECT_NEAR(student_t95(1e6), 1.9600, 1e-3);
  // Welch's degrees of freedom are rarely whole (values from numeric integration of t's density).
  EXPECT_NEAR(student_t95(1.5), 6.0167, 2e-3);
  EXPECT_NEAR(student_t95(2.94), 3.2195, 1e-3);
}

TEST(RepeatStatistics, MeanSpreadAndWelchInterval) {
  const std::vector<double> a{100, 102, 98}, b{105, 107, 103};
  const SampleStats sa = sample_stats(a), sb = sample_stats(b);
  EXPECT_EQ(sa.n, 3u);
  EXPECT_DOUBLE_EQ(sa.mean, 100);
  EXPECT_DOUBLE_EQ(sa.sd, 2);
  // Standard error sqrt(4/3 + 4/3), 4 degrees of freedom: 5 +- 2.7764 x 1.63299.
  const auto interval = difference_interval95(sa, sb);
  ASSERT_TRUE(interval);
  EXPECT_NEAR(interval->first, 5 - 4.5339, 1e-3);
  EXPECT_NEAR(interval->second, 5 + 4.5339, 1e-3);
  // One run a side, or runs that agree exactly: no interval.
  const std::vector<double> one{100}, same{7, 7, 7};
  EXPECT_FALSE(difference_interval95(sample_stats(one), sample_stats(one)));
  EXPECT_FALSE(difference_interval95(sample_stats(same), sample_stats(same)));
  // One run against three: the three's spread alone, with their 2 degrees of freedom.
  const auto against_one = difference_interval95(sample_stats(one), sb);
  ASSERT_TRUE(against_one);
  EXPECT_NEAR(against_one->second - 5, 4.3027 * 2 / std::sqrt(3.0), 1e-3);
}

RunDigest digest(const std::string& dir, double cct_us) {
  RunDigest d;
  d.dir = dir;
  d.run_name = "run";
  d.status = "completed";
  CollectiveTypeDigest& c = d.collectives["all_reduce"];
  c.instances = 10;
  c.cct_mean_us = cct_us;
  c.cct_p50_us = cct_us;
  d.jct_ms = {{{"train", 1}, cct_us / 100}};
  d.congestion = {{"drops", 0}};
  return d;
}

std::vector<RunDigest> runs(const std::string& side, const std::vector<double>& ccts) {
  std::vector<RunDigest> out;
  for (size_t i = 0; i < ccts.size(); ++i) {
    out.push_back(digest("/" + side + std::to_string(i), ccts[i]));
  }
  return out;
}

const ComparedMetric& cct_of(const RunComparison& c) {
  for (const ComparedMetric& m : c.metrics) {
    if (m.metric == "cct") return m;
  }
  throw std::logic_error("no cct");
}

TEST(RepeatedComparison, TheGateFlagsOnlyWhatTheSpreadDoesNotExplain) {
  Tolerances three;
  three.add("3");
  // One run a side: 5 % slower is beyond 3 %.
  const RunComparison single =
      compare_repeats(runs("a", {100}), runs("b", {105}), three, "twin", "lab");
  EXPECT_TRUE(cct_of(single).exceeded);
  EXPECT_TRUE(single.repeats_a.empty() && single.repeats_b.empty());

  // Three a side, spread 2 us: the interval 0.47 .. 9.53 % reaches inside 3 %.
  const RunComparison spread =
      compare_repeats(runs("a", {100, 102, 98}), runs("b", {105, 107, 103}), three, "twin", "lab");
  const ComparedMetric& cct = cct_of(spread);
  EXPECT_DOUBLE_EQ(*cct.a, 100);
  EXPECT_DOUBLE_EQ(*cct.b, 105);
  EXPECT_DOUBLE_EQ(*cct.delta_percent, 5);
  EXPECT_EQ(cct.a_runs, 3u);
  EXPECT_DOUBLE_EQ(cct.b_sd, 2);
  ASSERT_TRUE(cct.delta_percent_ci);
  EXPECT_NEAR(cct.delta_percent_ci->first, 0.466, 1e-3);
  EXPECT_FALSE(cct.exceeded);
  EXPECT_EQ(spread.repeats_a.size(), 3u);

  // 10 % slower with a tight spread: the whole interval is beyond 3 %.
  const RunComparison slower =
      compare_repeats(runs("a", {100, 102, 98}), runs("b", {110, 111, 109}), three, "twin", "lab");
  EXPECT_TRUE(cct_of(slower).exceeded);
  EXPECT_GT(cct_of(slower).delta_percent_ci->first, 3);
  // The instance count is never judged; the JCT row pairs over the runs like the rest.
  for (const ComparedMetric& m : slower.metrics) {
    if (m.metric == "instances") {
      EXPECT_FALSE(m.exceeded);
    }
    if (m.metric == "jct") {
      EXPECT_EQ(m.b_runs, 3u);
    }
  }

  const std::string text = comparison_text(spread);
  EXPECT_NE(text.find("ci95_%"), std::string::npos) << text;
  EXPECT_NE(text.find("A: 3 runs: /a0, /a1, /a2"), std::string::npos) << text;
  EXPECT_NE(text.find("+0.5..+9.5%"), std::string::npos) << text;
  const auto json = nlohmann::json::parse(comparison_json(spread));
  EXPECT_EQ(json["a_dirs"].size(), 3u);
  bool found = false;
  for (const auto& m : json["metrics"]) {
    if (m["metric"] != "cct") continue;
    found = true;
    EXPECT_EQ(m["a_runs"], 3);
    EXPECT_NEAR(m["delta_percent_ci95"][1].get<double>(), 9.534, 1e-3);
  }
  EXPECT_TRUE(found);
}

TEST(RepeatSpread, EachMetricsMeanSpreadAndVariationOverTheRuns) {
  // CCT 100, 102, 98 us: mean 100, sd 2, cv 2 %; the JCT the same over 100.
  const std::string text = repeat_spread_text(runs("r", {100, 102, 98}));
  EXPECT_NE(text.find("metric    mean    +-  cv_%  runs"), std::string::npos) << text;
  EXPECT_NE(text.find("cct (us)  100.00  2.00   2.0     3"), std::string::npos) << text;
  EXPECT_NE(text.find("jct (ms)  1.000  0.020   2.0     3"), std::string::npos) << text;
  // A counter that is 0 in every run has no variation to speak of.
  EXPECT_NE(text.find("drops      0  0.0     -     3"), std::string::npos) << text;
  // One run: no spread.
  const std::string one = repeat_spread_text(runs("r", {100}));
  EXPECT_NE(one.find("cct (us)  100.00   -     -     1"), std::string::npos) << one;
}

TEST(RepeatedComparison, ARepeatThatMeasuredNothingIsListedNotCompared) {
  // Repeat 2 was interrupted before its first collective completed.
  std::vector<RunDigest> a = runs("a", {100, 102});
  a.push_back(digest("/a2", 0));
  a.back().status = "interrupted";
  a.back().collectives.clear();
  const RunComparison c = compare_repeats(a, a, Tolerances(), "A", "B");
  EXPECT_EQ(c.repeats_a.size(), 3u);
  EXPECT_EQ(cct_of(c).a_runs, 2u);
  EXPECT_DOUBLE_EQ(*cct_of(c).a, 101);
}

}  // namespace
}  // namespace etwire::outputs

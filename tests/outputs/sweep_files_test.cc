// sweep.json's per-iteration times and per-series files, from a SweepResults built by hand with
// times that differ from rank to rank and iteration to iteration, so that every statistic
// nccl-tests' per-iteration readers use (slowest rank, p99, coefficient of variation) is known.
#include "outputs/sweep_files.h"

#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "tests/testing/test_paths.h"

namespace etwire::outputs {
namespace {

using Json = nlohmann::json;

SweepPoint point(collectives::CollectiveKind kind, uint64_t bytes, double busbw,
                 std::vector<std::vector<double>> rank_iteration_us) {
  SweepPoint p;
  p.kind = kind;
  p.bytes = p.requested_bytes = bytes;
  p.status = "completed";
  CollectiveMeans means;
  means.kind = kind;
  means.cct_us = 10;
  means.algbw_gbps = busbw / 2;
  means.busbw_gbps = busbw;
  means.instances = 4;
  p.measured = means;
  p.rank_iteration_us = std::move(rank_iteration_us);
  return p;
}

SweepResults two_series() {
  SweepResults sweep;
  sweep.ranks = 2;
  sweep.ranks_per_host = 2;
  sweep.iterations = 4;
  const collectives::CollectiveKind all_reduce = trace::CollectiveType::kAllReduce;
  const collectives::CollectiveKind all_gather = trace::CollectiveType::kAllGather;
  // Iteration times (the slower rank's): 12, 11, 30, 14 us.
  sweep.points.push_back(point(all_reduce, 1024, 4.0, {{12, 9, 30, 14}, {10, 11, 29, 13.5}}));
  sweep.points.push_back(point(all_reduce, 4096, 8.0, {{20, 20, 20, 20}, {20, 20, 20, 20}}));
  // Nothing every rank finished: no per-iteration entry.
  sweep.points.push_back(point(all_gather, 1024, 3.0, {{}, {}}));
  return sweep;
}

Json read_json(const std::filesystem::path& path) {
  std::ifstream in(path);
  return Json::parse(in);
}

TEST(SweepFiles, PerIterationTimesAreTheSlowestRanksWithTheirStatistics) {
  const auto dir = etwire::testing::make_scratch_dir("sweep-files");
  write_sweep_json(two_series(), (dir / "sweep.json").string(), dir.string());
  const Json doc = read_json(dir / "sweep.json");
  const Json& per_iter = doc["results"][0]["in_place_per_iter"];
  EXPECT_EQ(per_iter["times_us"], Json({12.0, 11.0, 30.0, 14.0}));
  EXPECT_EQ(per_iter["per_process_max_times_us"],
            Json({{12.0, 9.0, 30.0, 14.0}, {10.0, 11.0, 29.0, 13.5}}));
  EXPECT_DOUBLE_EQ(per_iter["avg_us"].get<double>(), 16.75);
  EXPECT_DOUBLE_EQ(per_iter["min_us"].get<double>(), 11);
  EXPECT_DOUBLE_EQ(per_iter["max_us"].get<double>(), 30);
  // Nearest rank: ceil(0.99 x 4) = the 4th of 4.
  EXPECT_DOUBLE_EQ(per_iter["p99_us"].get<double>(), 30);
  // Sample standard deviation: the squares 22.5625 + 33.0625 + 175.5625 + 7.5625 over 3.
  const double deviation = std::sqrt((22.5625 + 33.0625 + 175.5625 + 7.5625) / 3);
  EXPECT_NEAR(per_iter["cv_pct"].get<double>(), deviation / 16.75 * 100, 1e-9);
  EXPECT_DOUBLE_EQ(doc["results"][1]["in_place_per_iter"]["cv_pct"].get<double>(), 0);
  // Left out, not null, where there is nothing: a reader takes an absent key as "no data".
  EXPECT_FALSE(doc["results"][2].contains("in_place_per_iter"));
  EXPECT_EQ(doc["config"]["aggregated_iterations"], 1);
  EXPECT_EQ(doc["config"]["devices"],
            Json({{{"rank", 0}, {"hostname", "host 0"}}, {{"rank", 1}, {"hostname", "host 0"}}}));
}

TEST(SweepFiles, EachSeriesHasItsOwnFileAndAverage) {
  const auto dir = etwire::testing::make_scratch_dir("sweep-series");
  write_sweep_json(two_series(), (dir / "sweep.json").string(), dir.string());
  const Json doc = read_json(dir / "sweep.json");
  // Two series: an average over both would mix them.
  EXPECT_TRUE(doc["average_bus_bandwidth"]["bandwidth"].is_null());
  ASSERT_EQ(doc["fits"].size(), 2u);
  EXPECT_DOUBLE_EQ(doc["fits"][0]["average_bus_bandwidth"].get<double>(), 6.0);
  EXPECT_DOUBLE_EQ(doc["fits"][1]["average_bus_bandwidth"].get<double>(), 3.0);
  const Json all_reduce = read_json(dir / "all_reduce-ring.json");
  ASSERT_EQ(all_reduce["results"].size(), 2u);
  EXPECT_EQ(all_reduce["results"][0], doc["results"][0]);
  EXPECT_DOUBLE_EQ(all_reduce["average_bus_bandwidth"]["bandwidth"].get<double>(), 6.0);
  ASSERT_EQ(all_reduce["fits"].size(), 1u);
  const Json all_gather = read_json(dir / "all_gather-ring.json");
  EXPECT_EQ(all_gather["results"].size(), 1u);
  EXPECT_DOUBLE_EQ(all_gather["average_bus_bandwidth"]["bandwidth"].get<double>(), 3.0);
}

TEST(SweepFiles, OneSeriesKeepsItsAverageInTheSweepFile) {
  const auto dir = etwire::testing::make_scratch_dir("sweep-one");
  SweepResults sweep = two_series();
  sweep.points.pop_back();
  write_sweep_json(sweep, (dir / "sweep.json").string(), "");
  EXPECT_DOUBLE_EQ(
      read_json(dir / "sweep.json")["average_bus_bandwidth"]["bandwidth"].get<double>(), 6.0);
  EXPECT_FALSE(std::filesystem::exists(dir / "all_reduce-ring.json"));
}

}  // namespace
}  // namespace etwire::outputs

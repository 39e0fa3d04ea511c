// `etwire compare A B` as a user runs it: two runs of the demo configuration at two link speeds,
// a run against itself, tolerances and their exit codes, labels, the JSON file, and the errors.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <string>

#include "tests/testing/test_paths.h"

namespace etwire {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
namespace fs = std::filesystem;

constexpr int kBeyondTolerance = 4;

etwire::testing::CommandResult etwire(const std::string& args) {
  return etwire::testing::run_etwire(args);
}

nlohmann::json read_json(const fs::path& path) {
  std::ifstream in(path);
  return nlohmann::json::parse(in);
}

void write_file(const fs::path& path, const std::string& text) {
  fs::create_directories(path.parent_path());
  std::ofstream(path) << text;
}

// The demo configuration at 100 Gb/s and at 50 Gb/s, run once for every test.
class CompareCommand : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    scratch_ = new fs::path(etwire::testing::make_scratch_dir("compare"));
    const std::string config =
        (etwire::testing::source_dir() / "configs/loopback-demo.yaml").string();
    for (const auto& [dir, speed] : {std::pair{"fast", "100Gbps"}, {"slow", "50Gbps"}}) {
      auto r =
          etwire("run " + config + " --no-metrics --no-progress --set ports[0].speed=" + speed +
                 " -o " + (*scratch_ / dir).string());
      ASSERT_EQ(r.code, 0) << r.output;
    }
  }
  static void TearDownTestSuite() {
    delete scratch_;
    scratch_ = nullptr;
  }
  static std::string dir(const char* name) { return (*scratch_ / name).string(); }
  static fs::path scratch() { return *scratch_; }

 private:
  static fs::path* scratch_;
};

fs::path* CompareCommand::scratch_ = nullptr;

TEST_F(CompareCommand, ARunAgainstItselfHasNoDelta) {
  const fs::path json = scratch() / "self.json";
  auto r = etwire("compare " + dir("fast") + " " + dir("fast") + " --tolerance 0 --json " +
                  json.string());
  ASSERT_EQ(r.code, 0) << r.output;
  EXPECT_THAT(r.output, HasSubstr("all_reduce"));
  EXPECT_THAT(r.output, HasSubstr("Within tolerance"));
  const auto doc = read_json(json);
  EXPECT_EQ(doc["exceeded"], 0);
  ASSERT_FALSE(doc["metrics"].empty());
  for (const std::string section : {"collectives", "fct", "iterations", "congestion"}) {
    int rows = 0;
    for (const auto& m : doc["metrics"]) {
      if (m["section"] != section) continue;
      ++rows;
      EXPECT_EQ(m["delta"], 0.0) << m.dump();
      EXPECT_EQ(m["delta_percent"], 0.0) << m.dump();
      EXPECT_EQ(m["exceeded"], false) << m.dump();
    }
    EXPECT_GT(rows, 0) << "no " << section << " rows";
  }
}

TEST_F(CompareCommand, HalfTheLinkSpeedIsBeyondATightTolerance) {
  const fs::path json = scratch() / "tight.json";
  auto r = etwire("compare " + dir("fast") + " " + dir("slow") + " --tolerance 5 --json " +
                  json.string());
  EXPECT_EQ(r.code, kBeyondTolerance) << r.output;
  EXPECT_THAT(r.output, HasSubstr("Beyond tolerance"));
  // The directory names label the two sides.
  EXPECT_THAT(r.output, HasSubstr("A: fast = "));
  EXPECT_THAT(r.output, HasSubstr("B: slow = "));
  const auto doc = read_json(json);
  EXPECT_GT(doc["exceeded"], 0);
  bool busbw_seen = false;
  for (const auto& m : doc["metrics"]) {
    if (m["metric"] != "busbw") continue;
    busbw_seen = true;
    EXPECT_LT(m["b"].get<double>(), m["a"].get<double>());
    EXPECT_LT(m["delta_percent"].get<double>(), -5.0);
    EXPECT_EQ(m["tolerance_percent"], 5.0);
    EXPECT_EQ(m["exceeded"], true);
  }
  EXPECT_TRUE(busbw_seen);
}

TEST_F(CompareCommand, ALooseToleranceOrNoneExitsZero) {
  auto r = etwire("compare " + dir("fast") + " " + dir("slow") + " --tolerance 500");
  EXPECT_EQ(r.code, 0) << r.output;
  EXPECT_THAT(r.output, HasSubstr("Within tolerance"));
  r = etwire("compare " + dir("fast") + " " + dir("slow"));
  EXPECT_EQ(r.code, 0) << r.output;
  EXPECT_THAT(r.output, Not(HasSubstr("tolerance")));
}

TEST_F(CompareCommand, PerMetricTolerancesCheckOnlyTheirMetric) {
  // busbw halves (about -45 %): within 60 %, beyond 10 %; the other metrics are not checked.
  auto r = etwire("compare " + dir("fast") + " " + dir("slow") + " --tolerance busbw=60");
  EXPECT_EQ(r.code, 0) << r.output;
  r = etwire("compare " + dir("fast") + " " + dir("slow") + " --tolerance busbw=10");
  EXPECT_EQ(r.code, kBeyondTolerance) << r.output;
  EXPECT_THAT(r.output, HasSubstr("Beyond tolerance: 1 metric"));
  // A metric's own tolerance wins over the default.
  r = etwire("compare " + dir("fast") + " " + dir("slow") +
             " --tolerance 500 --tolerance fct_p99=1");
  EXPECT_EQ(r.code, kBeyondTolerance) << r.output;
}

TEST_F(CompareCommand, LabelsNameTheTwoSides) {
  const fs::path json = scratch() / "labels.json";
  auto r = etwire("compare " + dir("fast") + " " + dir("slow") +
                  " --labels prediction,measurement --json " + json.string());
  ASSERT_EQ(r.code, 0) << r.output;
  EXPECT_THAT(r.output, HasSubstr("prediction"));
  EXPECT_THAT(r.output, HasSubstr("measurement"));
  const auto doc = read_json(json);
  EXPECT_EQ(doc["a"]["label"], "prediction");
  EXPECT_EQ(doc["b"]["label"], "measurement");
  EXPECT_EQ(doc["a"]["run"], "loopback-demo");
  EXPECT_EQ(etwire("compare " + dir("fast") + " " + dir("slow") + " --labels onlyone").code, 2);
}

TEST_F(CompareCommand, AMissingDirectoryOrSummaryIsNamed) {
  auto r = etwire("compare " + dir("fast") + " " + dir("nowhere"));
  EXPECT_EQ(r.code, 2);
  EXPECT_THAT(r.output, HasSubstr(dir("nowhere") + ": no such results directory"));
  fs::create_directories(scratch() / "empty");
  r = etwire("compare " + dir("empty") + " " + dir("fast"));
  EXPECT_EQ(r.code, 2);
  EXPECT_THAT(r.output, HasSubstr((scratch() / "empty" / "summary.json").string()));
  write_file(scratch() / "garbled" / "summary.json", "{ not json");
  r = etwire("compare " + dir("fast") + " " + dir("garbled"));
  EXPECT_EQ(r.code, 2);
  EXPECT_THAT(r.output, HasSubstr("not valid JSON"));
}

TEST_F(CompareCommand, RepeatedRunsOfEachSideAreAveragedWithTheirInterval) {
  // The fast run twice against the slow one and the fast one: B's mean lies halfway, and its
  // spread is so wide that no 10 % tolerance can tell; one fast and one slow run alone can.
  const fs::path json = scratch() / "repeats.json";
  auto r = etwire("compare " + dir("fast") + "," + dir("fast") + " " + dir("slow") + "," +
                  dir("fast") + " --tolerance 10 --json " + json.string());
  EXPECT_EQ(r.code, 0) << r.output;
  EXPECT_THAT(r.output, HasSubstr("A: 2 runs: " + dir("fast") + ", " + dir("fast")));
  EXPECT_THAT(r.output, HasSubstr("ci95_%"));
  const nlohmann::json doc = read_json(json);
  EXPECT_EQ(doc["b_dirs"].size(), 2u);
  for (const auto& m : doc["metrics"]) {
    if (m["metric"] != "cct") continue;
    EXPECT_EQ(m["b_runs"], 2);
    EXPECT_GT(m["b_sd"].get<double>(), 0.0);
    EXPECT_FALSE(m["exceeded"].get<bool>());
  }
  r = etwire("compare " + dir("fast") + " " + dir("slow") + " --tolerance 10");
  EXPECT_EQ(r.code, kBeyondTolerance) << r.output;
  // A list with a hole, or a run of it missing, is named.
  r = etwire("compare " + dir("fast") + ",," + dir("fast") + " " + dir("slow"));
  EXPECT_EQ(r.code, 2);
  EXPECT_THAT(r.output, HasSubstr("an empty directory name in the list"));
  r = etwire("compare " + dir("fast") + " " + dir("slow") + "," + dir("nowhere"));
  EXPECT_EQ(r.code, 2);
  EXPECT_THAT(r.output, HasSubstr(dir("nowhere") + ": no such results directory"));
}

TEST_F(CompareCommand, RunsWithNoCollectiveTypeInCommonSaySo) {
  write_file(scratch() / "alltoall" / "summary.json", R"({
    "status": "completed", "run": {"name": "a2a"}, "jobs": [],
    "collectives": [{"type": "all_to_all", "warmup": false, "cct_ns": 1000, "busbw_GBps": 3.0,
                     "ideal_percent": 50.0}],
    "iterations": [], "ports": [], "fct": []})");
  auto r = etwire("compare " + dir("fast") + " " + dir("alltoall"));
  EXPECT_EQ(r.code, 2) << r.output;
  EXPECT_THAT(r.output, HasSubstr("share no collective type"));
  EXPECT_THAT(r.output, HasSubstr("all_reduce"));
  EXPECT_THAT(r.output, HasSubstr("all_to_all"));
}

TEST_F(CompareCommand, BadTolerancesAreBadInput) {
  for (const char* tolerance : {"fast", "-3", "busbw=", "frobs=5"}) {
    auto r = etwire("compare " + dir("fast") + " " + dir("slow") + " --tolerance " + tolerance);
    EXPECT_EQ(r.code, 2) << tolerance << ": " << r.output;
    EXPECT_THAT(r.output, HasSubstr("--tolerance")) << tolerance;
  }
}

}  // namespace
}  // namespace etwire

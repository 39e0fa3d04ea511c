// `etwire compare`'s logic: a summary.json written by write_summary_json read back into a digest
// (so the reader follows the writer's schema), deltas and tolerances with known figures, pairing
// of iterations, default labels and the errors.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "engine/run_results.h"
#include "outputs/compare/comparison_report.h"
#include "outputs/compare/run_comparison.h"
#include "outputs/compare/run_digest.h"
#include "outputs/compare/tolerances.h"
#include "outputs/results_files.h"
#include "outputs/summary_json.h"
#include "tests/testing/test_paths.h"

namespace etwire::outputs {
namespace {

using namespace engine;
namespace fs = std::filesystem;

CollectiveRecord all_reduce(uint32_t iteration, bool warmup, clock::Nanos cct) {
  CollectiveRecord c;
  c.kind = trace::CollectiveType::kAllReduce;
  c.algorithm = collectives::default_algorithm(c.kind);
  c.group_size = 8;
  c.trace_bytes = 1 << 20;
  c.algbw_bytes = 1'000'000;
  c.iteration = iteration;
  c.warmup = warmup;
  c.last_arrival = 1000;
  c.end = 1000 + cct;
  return c;
}

// Measured all-reduce instances of 1 ms, 0.4 ms and 0.5 ms (1e6 algbw bytes over 8 ranks: busbw
// 1.75, 4.375 and 3.5 GB/s), a warm-up one of 2 ms; two measured iterations; two ports, the
// second counting no PFC.
RunResults sample_results() {
  RunResults r;
  r.status = RunStatus::kCompleted;
  r.run_name = "twin";
  r.world_size = 8;
  r.goodput_bytes_per_second = 3.5e9;
  r.jobs = {{"train", "traces/train", 8, 2, 1, 100}};
  r.collectives = {all_reduce(0, true, 2'000'000), all_reduce(1, false, 1'000'000),
                   all_reduce(2, false, 400'000), all_reduce(2, false, 500'000)};
  r.iterations = {{0, 0, true, 0, 9'000'000, {}},
                  {0, 1, false, 0, 2'000'000, {}},
                  {0, 2, false, 2'000'000, 3'500'000, {}}};
  PortRecord a;
  a.name = "p0";
  a.ecn_marked_received = 5;
  a.pfc_pauses_sent = 2;
  PortRecord b;
  b.name = "p1";
  b.ecn_marked_received = 7;
  b.pfc_pauses_sent = 99;
  for (size_t f = 0; f < dataplane::kPortCounterFields.size(); ++f) {
    if (dataplane::kPortCounterFields[f].name == "pfc_pauses_sent") {
      b.absent |= dataplane::port_counter_bit(f);
    }
  }
  r.ports = {a, b};
  r.fct = {{trace::CollectiveType::kAllReduce, 32, 10'000, 20'000, 30'000, 40'000, 50'000}};
  return r;
}

fs::path write_results(const RunResults& results, const std::string& name) {
  const fs::path dir = etwire::testing::make_scratch_dir("compare-unit") / name;
  fs::create_directories(dir);
  write_summary_json(results, (dir / "summary.json").string());
  return dir;
}

std::optional<uint64_t> congestion(const RunDigest& d, const std::string& name) {
  for (const auto& [counter, value] : d.congestion) {
    if (counter == name) return value;
  }
  ADD_FAILURE() << "no counter " << name;
  return std::nullopt;
}

const ComparedMetric& metric(const RunComparison& c, const std::string& name,
                             const std::string& subject = "all_reduce") {
  for (const ComparedMetric& m : c.metrics) {
    if (m.metric == name && (m.subject == subject || m.subject.empty())) return m;
  }
  throw std::logic_error("no metric " + name);
}

TEST(RunDigest, ReadsWhatWriteSummaryJsonWrites) {
  const RunDigest d = read_run_digest(write_results(sample_results(), "twin"));
  EXPECT_EQ(d.run_name, "twin");
  EXPECT_EQ(d.status, "completed");
  ASSERT_EQ(d.collectives.count("all_reduce"), 1u);
  const CollectiveTypeDigest& ar = d.collectives.at("all_reduce");
  EXPECT_EQ(ar.instances, 3u);  // the warm-up instance left out
  EXPECT_DOUBLE_EQ(ar.cct_mean_us, (1000.0 + 400.0 + 500.0) / 3);
  EXPECT_DOUBLE_EQ(ar.cct_p50_us, 500.0);
  ASSERT_TRUE(ar.busbw_GBps.has_value());
  EXPECT_NEAR(*ar.busbw_GBps, (1.75 + 4.375 + 3.5) / 3, 1e-9);
  ASSERT_TRUE(ar.ideal_percent.has_value());
  EXPECT_NEAR(*ar.ideal_percent, (50.0 + 125.0 + 100.0) / 3, 1e-9);
  ASSERT_EQ(d.fct.count("all_reduce"), 1u);
  EXPECT_DOUBLE_EQ(d.fct.at("all_reduce").p50_us, 10.0);
  EXPECT_DOUBLE_EQ(d.fct.at("all_reduce").p99_us, 30.0);
  EXPECT_DOUBLE_EQ(d.fct.at("all_reduce").max_us, 50.0);
  ASSERT_EQ(d.jct_ms.size(), 2u);  // measured iterations only
  EXPECT_EQ(d.jct_ms[0].first, (std::pair<std::string, int64_t>{"train", 1}));
  EXPECT_DOUBLE_EQ(d.jct_ms[0].second, 2.0);
  EXPECT_DOUBLE_EQ(d.jct_ms[1].second, 1.5);
  EXPECT_EQ(congestion(d, "ecn_marked_received"), 12u);
  // The port that does not count PFC adds nothing to the sum.
  EXPECT_EQ(congestion(d, "pfc_pauses_sent"), 2u);
  EXPECT_EQ(congestion(d, "drops"), 0u);
}

TEST(RunDigest, ErrorsNameThePath) {
  const fs::path scratch = etwire::testing::make_scratch_dir("compare-unit");
  try {
    read_run_digest(scratch / "missing");
    FAIL() << "no error";
  } catch (const CompareInputError& e) {
    EXPECT_NE(std::string(e.what()).find((scratch / "missing").string()), std::string::npos);
  }
  try {
    read_run_digest(scratch);
    FAIL() << "no error";
  } catch (const CompareInputError& e) {
    EXPECT_NE(std::string(e.what()).find((scratch / "summary.json").string()), std::string::npos);
  }
  EXPECT_THROW(digest_summary_json("[1, 2]", "x"), CompareInputError);
  EXPECT_THROW(digest_summary_json("{", "x"), CompareInputError);
}

// A summary.json that is not what etwire writes is refused naming the file and the JSON path,
// as `etwire report` refuses it; before, compare read a wrong value as 0 or "" and went on.
TEST(RunDigest, RefusesMalformedValuesNamingThePath) {
  const fs::path dir = write_results(sample_results(), "malformed");
  std::ifstream in(dir / "summary.json");
  const nlohmann::json good = nlohmann::json::parse(in);
  const std::vector<std::pair<std::function<void(nlohmann::json&)>, std::string>> cases{
      {[](auto& j) { j["collectives"][0]["cct_ns"] = "fast"; }, "collectives[0].cct_ns: expected"},
      {[](auto& j) { j["collectives"][0]["cct_ns"] = -5; }, "collectives[0].cct_ns: expected"},
      {[](auto& j) { j["collectives"][0]["cct_ns"] = 1e300; }, "collectives[0].cct_ns: expected"},
      {[](auto& j) { j["collectives"][0].erase("type"); }, "collectives[0]: no \"type\""},
      {[](auto& j) { j["collectives"][0] = "x"; }, "collectives[0]: expected an object"},
      {[](auto& j) { j["collectives"][0]["warmup"] = "yes"; }, "collectives[0].warmup: expected"},
      {[](auto& j) { j["iterations"][0]["jct_ns"] = "slow"; }, "iterations[0].jct_ns: expected"},
      {[](auto& j) { j.erase("iterations"); }, "top level: no \"iterations\""},
      {[](auto& j) { j.erase("status"); }, "top level: no \"status\""},
      {[](auto& j) { j["status"] = "finished"; }, "status: unknown status"},
      {[](auto& j) { j["run"] = "x"; }, "run: expected an object"},
      {[](auto& j) { j["run"]["world_size"] = -1; }, "run.world_size: expected"},
      {[](auto& j) { j["ports"][0]["drops"] = "many"; }, "ports[0].drops: expected"},
      {[](auto& j) { j["fct"][0]["flows"] = -3; }, "fct[0].flows: expected"},
      // As report reads them: a collective type no collective has, a job the run did not have.
      {[](auto& j) { j["collectives"][0]["type"] = "all_reduse"; },
       "collectives[0].type: unknown collective type \"all_reduse\""},
      {[](auto& j) { j["fct"][0]["type"] = "ALL_REDUCE"; }, "fct[0].type: unknown collective type"},
      {[](auto& j) { j["iterations"][0]["job"] = "other"; },
       "iterations[0].job: job \"other\" is not in jobs[]"},
      {[](auto& j) { j.erase("jobs"); }, "top level: no \"jobs\""},
      {[](auto& j) { j["jobs"][0].erase("name"); }, "jobs[0]: no \"name\""},
  };
  for (const auto& [mutate, where] : cases) {
    nlohmann::json bad = good;
    mutate(bad);
    try {
      digest_summary_json(bad.dump(), "x/summary.json");
      ADD_FAILURE() << where << ": read";
    } catch (const CompareInputError& e) {
      EXPECT_EQ(std::string(e.what()).rfind("x/summary.json: " + where, 0), 0u) << e.what();
    }
  }
  // A number no double holds is not JSON that compare or report reads (it was exit 1, unnamed).
  try {
    digest_summary_json(R"({"status": 1e999})", "x/summary.json");
    ADD_FAILURE() << "1e999 read";
  } catch (const CompareInputError& e) {
    EXPECT_EQ(std::string(e.what()).rfind("x/summary.json: not valid JSON", 0), 0u) << e.what();
  }
}

// A file of more values than any summary.json has is refused while it is parsed (before, a file
// of tiny values took 17 times its size in memory).
TEST(RunDigest, RefusesMoreValuesThanAnySummaryHas) {
  std::string zeros = R"({"run": {}, "collectives": [0)";
  for (uint64_t v = 0; v < kMaxSummaryJsonValues; ++v) zeros += ",0";
  try {
    digest_summary_json(zeros + "]}", "x/summary.json");
    FAIL() << "no error";
  } catch (const CompareInputError& e) {
    EXPECT_EQ(std::string(e.what()).rfind("x/summary.json: more than 6291456 values", 0), 0u)
        << e.what();
  }
}

// Nesting past any summary.json's is refused as bad input (it would overflow the stack of what
// walks it).
TEST(RunDigest, RefusesDeepNesting) {
  const std::string deep =
      R"({"run": {}, "collectives": )" + std::string(80000, '[') + std::string(80000, ']') + "}";
  try {
    digest_summary_json(deep, "x/summary.json");
    FAIL() << "no error";
  } catch (const CompareInputError& e) {
    EXPECT_STREQ(e.what(), "x/summary.json: nested deeper than 64 levels: not a summary.json");
  }
}

TEST(Tolerances, MetricBeatsGroupBeatsDefault) {
  Tolerances t;
  EXPECT_TRUE(t.empty());
  EXPECT_FALSE(t.of("busbw", false).has_value());
  t.add("10");
  t.add("congestion=50");
  t.add("drops=0");
  t.add("busbw=2.5%");
  EXPECT_EQ(t.of("busbw", false), 2.5);
  EXPECT_EQ(t.of("jct", false), 10.0);
  EXPECT_EQ(t.of("cnps_sent", true), 50.0);
  EXPECT_EQ(t.of("drops", true), 0.0);
  for (const char* bad : {"", "x", "-1", "nan", "inf", "busbw=", "=5", "bogus=5", "5x"}) {
    EXPECT_THROW(t.add(bad), std::invalid_argument) << bad;
  }
}

TEST(RunComparison, DeltasAndTolerancesWithKnownFigures) {
  RunResults slower = sample_results();
  slower.run_name = "lab";
  for (CollectiveRecord& c : slower.collectives) c.end = c.last_arrival + 2 * c.cct();
  slower.ports[0].drops = 4;  // none in the prediction
  Tolerances t;
  t.add("60");
  const RunComparison c =
      compare_runs(read_run_digest(write_results(sample_results(), "twin")),
                   read_run_digest(write_results(slower, "lab")), t, "twin", "lab");
  const ComparedMetric& cct = metric(c, "cct");
  EXPECT_NEAR(*cct.delta_percent, 100.0, 1e-9);  // twice as long
  EXPECT_TRUE(cct.exceeded);
  const ComparedMetric& busbw = metric(c, "busbw");
  EXPECT_NEAR(*busbw.delta_percent, -50.0, 1e-9);  // half the bandwidth: within 60 %
  EXPECT_FALSE(busbw.exceeded);
  const ComparedMetric& instances = metric(c, "instances");
  EXPECT_FALSE(instances.tolerance_percent.has_value());
  const ComparedMetric& drops = metric(c, "drops");
  EXPECT_EQ(drops.a, 0.0);
  EXPECT_EQ(drops.b, 4.0);
  EXPECT_FALSE(drops.delta_percent.has_value());  // from none: no percentage, always beyond
  EXPECT_TRUE(drops.exceeded);
  EXPECT_EQ(c.exceeded(), 3u);  // cct, cct_p50, drops

  const std::string text = comparison_text(c);
  EXPECT_NE(text.find("Beyond tolerance: 3 metrics"), std::string::npos) << text;
  EXPECT_NE(text.find("new"), std::string::npos) << text;
  const auto json = nlohmann::json::parse(comparison_json(c));
  EXPECT_EQ(json["exceeded"], 3);
  EXPECT_EQ(json["a"]["label"], "twin");
  EXPECT_EQ(json["tolerances"]["default_percent"], 60.0);
}

TEST(RunComparison, IterationsOfDifferentlyNamedJobsPairByPosition) {
  RunResults renamed = sample_results();
  renamed.jobs[0].name = "other";
  const RunComparison c = compare_runs(read_run_digest(write_results(sample_results(), "a")),
                                       read_run_digest(write_results(renamed, "b")), {}, "a", "b");
  int iterations = 0;
  for (const ComparedMetric& m : c.metrics) {
    if (m.section != ComparedSection::kIterations) continue;
    ++iterations;
    EXPECT_TRUE(m.a && m.b) << m.subject;
    EXPECT_EQ(m.delta, 0.0);
  }
  EXPECT_EQ(iterations, 2);
}

TEST(RunComparison, NoSharedCollectiveTypeIsAnError) {
  RunResults gather = sample_results();
  for (CollectiveRecord& c : gather.collectives) c.kind = trace::CollectiveType::kAllGather;
  try {
    compare_runs(read_run_digest(write_results(sample_results(), "a")),
                 read_run_digest(write_results(gather, "b")), {}, "a", "b");
    FAIL() << "no error";
  } catch (const CompareInputError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("share no collective type"), std::string::npos) << what;
    EXPECT_NE(what.find("all_gather"), std::string::npos) << what;
  }
}

TEST(RunComparison, DefaultLabels) {
  RunDigest a, b;
  a.dir = "/x/prediction";
  b.dir = "/y/measurement/";
  EXPECT_EQ(default_labels(a, b),
            (std::pair<std::string, std::string>{"prediction", "measurement"}));
  b.dir = "/y/prediction";
  a.run_name = "twin";
  b.run_name = "lab";
  EXPECT_EQ(default_labels(a, b), (std::pair<std::string, std::string>{"twin", "lab"}));
  b.run_name = "twin";
  EXPECT_EQ(default_labels(a, b), (std::pair<std::string, std::string>{"A", "B"}));
}

}  // namespace
}  // namespace etwire::outputs

// The time series of port counters (telemetry.record.port_sample_interval) on the loopback data
// plane: rows at the run's start and end and at multiples of the interval between, running totals
// that never go back and end at the summary's figures, quiet stretches left out but bracketed, and
// a run that does exactly the same with and without it.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "control/resolve/config_loader.h"
#include "engine/run_engine.h"
#include "tests/testing/loopback_options.h"
#include "tests/testing/test_paths.h"
#include "trace/synth/synth.h"

namespace etwire::engine {
namespace {

namespace fs = std::filesystem;

struct Row {
  clock::Nanos at = 0;
  std::string port;
  dataplane::PortCounters counters;
  double paced_rate_bps = 0;
};

class RecordingSink final : public PortSeriesSink {
 public:
  void append(const PortSeriesRow& row) override {
    rows.push_back({row.at, std::string(row.port), *row.counters, row.paced_rate_bps});
  }
  std::vector<Row> rows;
};

// Four ranks, two all-reduces of 1 MiB with 200 us of compute between them: a quiet
// stretch the series must not fill sample by sample.
control::RunPlan demo(const fs::path& dir, const std::string& interval) {
  synth::MicrobenchSpec spec;
  spec.collective = trace::CollectiveType::kAllReduce;
  spec.bytes = 1 << 20;
  spec.ranks = 4;
  spec.iterations = 2;
  spec.compute_us = 200;
  fs::create_directories(dir);
  const std::string prefix = (dir / "t").string();
  synth::write_microbench(spec, prefix);
  const std::string text = fmt::format(
      "run: {{name: ports, seed: 1}}\nworkload:\n  jobs:\n    - name: j\n      trace: {}\n"
      "ports:\n  - {{name: h, count: 4, backend: loopback, speed: 100Gbps, mtu: 4200}}\n"
      "telemetry:\n  record:\n    port_sample_interval: {}\n",
      prefix, interval);
  auto loaded = control::load_config_text(text, (dir / "test.yaml").string(), dir.string());
  EXPECT_TRUE(loaded.ok()) << loaded.diagnostics.to_text();
  return loaded;
}

TEST(PortSampler, SeriesRunsFromStartToEndAndEndsAtTheSummary) {
  const fs::path dir = testing::make_scratch_dir("port-sampler");
  const auto loaded = demo(dir, "1us");
  RecordingSink sink;
  RunEngine engine(loaded, testing::loopback());
  engine.set_port_writer(&sink);
  const RunResults& results = engine.run();
  ASSERT_EQ(results.status, RunStatus::kCompleted) << results.diagnosis;
  ASSERT_FALSE(sink.rows.empty());
  ASSERT_EQ(sink.rows.size() % 4, 0u) << "every sample has a row per port";

  EXPECT_EQ(sink.rows.front().at, 0);
  EXPECT_EQ(sink.rows.back().at, results.end_time);
  std::map<std::string, dataplane::PortCounters> last;
  clock::Nanos previous = -1;
  for (size_t i = 0; i < sink.rows.size(); ++i) {
    const Row& row = sink.rows[i];
    if (i % 4 == 0) {
      EXPECT_GT(row.at, previous) << "sample times rise";
      previous = row.at;
      if (i > 0 && i + 4 < sink.rows.size()) {
        EXPECT_EQ(row.at % 1000, 0) << "samples between the ends are at multiples of 1 us";
      }
    } else {
      EXPECT_EQ(row.at, previous) << "a sample's rows share their time";
    }
    auto& before = last[row.port];
    for (const auto& field : dataplane::kPortCounterFields) {
      EXPECT_GE(row.counters.*field.member, before.*field.member)
          << row.port << " " << field.name << " at " << row.at;
    }
    before = row.counters;
  }
  for (const PortRecord& port : results.ports) {
    ASSERT_TRUE(last.count(port.name)) << port.name;
    for (const auto& field : dataplane::kPortCounterFields) {
      EXPECT_EQ(last[port.name].*field.member, port.*field.member) << port.name << field.name;
    }
  }
  // The 200 us compute phases would be 400 samples of 4 rows at 1 us: left out but bracketed.
  const size_t samples = sink.rows.size() / 4;
  const auto every = static_cast<size_t>(results.end_time / 1000);
  EXPECT_LT(samples, every - 300) << "quiet stretches are not written sample by sample";
}

TEST(PortSampler, SamplingChangesNothingTheRunDoes) {
  const fs::path dir = testing::make_scratch_dir("port-sampler-same");
  const auto sampled = demo(dir / "a", "1us");
  const auto plain = demo(dir / "b", "0s");
  RecordingSink sink;
  RunEngine with(sampled, testing::loopback());
  with.set_port_writer(&sink);
  const RunResults a = with.run();
  RunEngine without(plain, testing::loopback());
  without.set_port_writer(&sink);  // interval 0: no sampler
  const size_t rows = sink.rows.size();
  const RunResults b = without.run();
  EXPECT_EQ(sink.rows.size(), rows);
  EXPECT_EQ(a.end_time, b.end_time);
  EXPECT_EQ(a.events, b.events);
  ASSERT_EQ(a.collectives.size(), b.collectives.size());
  for (size_t i = 0; i < a.collectives.size(); ++i) {
    EXPECT_EQ(a.collectives[i].end, b.collectives[i].end);
  }
}

}  // namespace
}  // namespace etwire::engine

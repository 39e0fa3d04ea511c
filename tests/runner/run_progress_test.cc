// The progress line of `etwire run`: the total it counts against is what a run records, and the
// line shows the share done, the time left and the ports' rates over the run clock.
#include "runner/run_progress.h"

#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "runner/configured_run.h"
#include "runner/exit_codes.h"
#include "tests/testing/test_paths.h"

namespace etwire::runner {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using ::testing::Not;

// Runs CONFIG (with OVERRIDES) to the end; returns the instances it recorded and what
// expected_instances() made of its plan.
std::pair<uint64_t, uint64_t> recorded_and_expected(const std::string& config,
                                                    std::vector<std::string> overrides) {
  const fs::path out = testing::make_scratch_dir("progress") / "out";
  RunRequest request;
  request.config = (testing::source_dir() / "configs" / config).string();
  request.overrides = std::move(overrides);
  request.out = out.string();
  request.no_metrics = true;
  request.no_progress = true;
  request.quiet = true;
  uint64_t recorded = 0;
  request.on_results = [&](const engine::RunResults& results) {
    EXPECT_EQ(results.status, engine::RunStatus::kCompleted) << config;
    recorded = results.collectives.size();
  };
  ConfiguredRun run(request);
  EXPECT_EQ(run.agree(), kExitOk) << config;
  const uint64_t expected = expected_instances(run.loaded());
  EXPECT_EQ(run.set_up(), kExitOk);
  EXPECT_EQ(run.start(), kExitOk);
  EXPECT_EQ(run.run(), kExitOk);
  EXPECT_EQ(run.gather(), kExitOk);
  EXPECT_EQ(run.write(), kExitOk);
  run.release(kExitOk);
  return {recorded, expected};
}

TEST(RunProgress, TheTotalIsWhatARunRecords) {
  // One job; two jobs sharing the ports, each with its own iterations.
  auto [recorded, expected] = recorded_and_expected("loopback-demo.yaml", {});
  EXPECT_EQ(expected, recorded);
  EXPECT_GT(expected, 0u);
  std::tie(recorded, expected) =
      recorded_and_expected("mixed-allreduce-alltoall.yaml",
                            {"workload.jobs[0].iterations=2", "workload.jobs[1].iterations=3"});
  EXPECT_EQ(expected, recorded);
  EXPECT_GT(expected, 0u);
}

TEST(RunProgress, SendsCountAsInstances) {
  const fs::path dir = testing::make_scratch_dir("progress-p2p");
  const auto synth = testing::run_etwire("synth microbench -c send_recv -b 64KiB -n 8 -i 3 -o " +
                                         (dir / "p2p").string());
  ASSERT_EQ(synth.code, 0) << synth.output;
  const auto [recorded, expected] = recorded_and_expected(
      "loopback-demo.yaml", {"workload.jobs[0].trace=" + (dir / "p2p").string()});
  EXPECT_EQ(expected, recorded);
  EXPECT_GT(expected, 0u);
}

TEST(RunProgress, TheLineShowsTheShareTheTimeLeftAndThePortsRates) {
  engine::RunResults results;
  results.collectives.resize(25);
  results.flows = 700;
  engine::ProgressSample sample;
  sample.so_far = &results;
  sample.now = 1'000'000;  // 1 ms
  sample.port_names = {"a", "b"};
  sample.port_tx_bytes = {0, 0};
  RunProgress progress(100, true);
  // 25 of 100 after 10 s: 30 s left at that pace. No rate before a second sample.
  std::string line = progress.line(sample, std::chrono::seconds(10));
  EXPECT_THAT(line, HasSubstr("25.0 % | collectives 25 of 100 | ETA 0:30 | flows 700"));
  EXPECT_THAT(line, HasSubstr("virtual 1.000 ms"));
  EXPECT_THAT(line, Not(HasSubstr("Gb/s")));
  // 1 ms later: a has sent 12.5 MB (100 Gb/s), b 1.25 MB (10 Gb/s).
  results.collectives.resize(50);
  sample.now = 2'000'000;
  sample.port_tx_bytes = {12'500'000, 1'250'000};
  line = progress.line(sample, std::chrono::seconds(20));
  EXPECT_THAT(line, HasSubstr("50.0 % | collectives 50 of 100 | ETA 0:20"));
  EXPECT_THAT(line, HasSubstr("tx Gb/s a 100.0 b 10.0"));
}

TEST(RunProgress, ManyPortsShowTheirMeanAndExtremes) {
  engine::RunResults results;
  results.wall_clock = true;
  engine::ProgressSample sample;
  sample.so_far = &results;
  for (int p = 0; p < 6; ++p) {
    sample.port_names.push_back(fmt::format("p{}", p));
    sample.port_tx_bytes.push_back(0);
  }
  RunProgress unknown_total(0, false);
  EXPECT_THAT(unknown_total.line(sample, std::chrono::seconds(1)),
              Not(HasSubstr("%")));  // no total: no share, no time left
  sample.now = 1'000'000'000;        // 1 s of run time: bytes x 8 / 1e9 Gb/s
  sample.port_tx_bytes = {1'250'000'000, 2'500'000'000, 1'250'000'000,
                          1'250'000'000, 125'000'000,   1'250'000'000};
  const std::string line = unknown_total.line(sample, std::chrono::seconds(2));
  EXPECT_THAT(line, HasSubstr("collectives 0 | flows 0 | run 1000.000 ms"));
  EXPECT_THAT(line, HasSubstr("tx Gb/s: 6 ports mean 10.2, min 1.0 (p4), max 20.0 (p1)"));
}

}  // namespace
}  // namespace etwire::runner

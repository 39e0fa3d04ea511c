// A run's phases, each on its own: agree refuses an invalid configuration before anything is set
// up; set_up refuses what cannot run before a results directory exists; on the bundled loopback
// configuration the phases in order leave the results files, and each phase leaves what the next
// one needs.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "runner/configured_run.h"
#include "runner/emulator_processes.h"
#include "runner/exit_codes.h"
#include "runner/results_lock.h"
#include "runner/sweep_run.h"
#include "tests/testing/test_paths.h"

namespace etwire::runner {
namespace {

namespace fs = std::filesystem;

RunRequest demo_request(const fs::path& out) {
  RunRequest request;
  request.config = (testing::source_dir() / "configs" / "loopback-demo.yaml").string();
  request.out = out.string();
  request.no_metrics = true;
  request.no_progress = true;
  request.quiet = true;
  return request;
}

TEST(ConfiguredRun, AgreeRefusesAnInvalidConfigurationAndSetsNothingUp) {
  const fs::path dir = testing::make_scratch_dir("runner-invalid");
  const fs::path config = dir / "bad.yaml";
  std::ofstream(config) << "run: {name: bad}\nports: []\n";
  RunRequest request = demo_request(dir / "out");
  request.config = config.string();
  ConfiguredRun run(request);
  EXPECT_EQ(run.agree(), kExitBadInput);
  EXPECT_FALSE(run.loaded().ok());
  EXPECT_EQ(run.engine(), nullptr);
  EXPECT_FALSE(fs::exists(dir / "out"));
}

TEST(ConfiguredRun, AgreeRefusesDevicePortsSplitBetweenEmulatorsWithoutALauncher) {
  // Alone, the process would drive only the first emulator's ports and fail at its first post to
  // another's.
  const fs::path dir = testing::make_scratch_dir("runner-emulators");
  RunRequest request = demo_request(dir / "out");
  request.config = (testing::source_dir() / "configs" / "multi-host-memif.yaml").string();
  ConfiguredRun run(request);
  EXPECT_EQ(run.agree(), kExitBadInput);
  EXPECT_TRUE(run.loaded().ok()) << "the configuration itself is valid";
  EXPECT_EQ(run.engine(), nullptr);
  EXPECT_FALSE(fs::exists(dir / "out"));
  // Software RNIC ports split between emulators run in one process, on the twin.
  config::RunConfig software = run.loaded().config;
  EXPECT_FALSE(launcher_needed(software).empty());
  for (config::PortConfig& port : software.ports) port.backend = config::Backend::kVerbs;
  software.verbs.rnic = config::RnicKind::kSoftware;
  EXPECT_TRUE(launcher_needed(software).empty());
}

TEST(ConfiguredRun, ASweepRefusesDevicePortsSplitBetweenEmulators) {
  const fs::path dir = testing::make_scratch_dir("runner-sweep-emulators");
  SweepOptions sweep;
  sweep.config = (testing::source_dir() / "configs" / "multi-host-memif.yaml").string();
  sweep.out = (dir / "sweep").string();
  sweep.flags.max_bytes = "4KiB";
  EXPECT_EQ(run_sweep(sweep), kExitBadInput);
  EXPECT_FALSE(fs::exists(dir / "sweep"));
}

TEST(ConfiguredRun, ARunRefusesAResultsDirectoryAnotherRunHolds) {
  // Two runs into one directory would splice their flows.csv lines: the second is refused before
  // it writes anything.
  const fs::path dir = testing::make_scratch_dir("runner-locked");
  const fs::path out = dir / "out";
  fs::create_directories(out);
  ResultsLock other;
  std::string why;
  ASSERT_TRUE(other.take(out, why)) << why;
  EXPECT_EQ(run_configuration(demo_request(out)), kExitBadInput);
  EXPECT_TRUE(fs::is_empty(out));
  ResultsLock second;
  EXPECT_FALSE(second.take(out, why));
  EXPECT_NE(why.find("another etwire run is writing its results there"), std::string::npos) << why;
  other.release();
  EXPECT_EQ(run_configuration(demo_request(out)), kExitOk);
  EXPECT_TRUE(fs::is_regular_file(out / "flows.csv"));
}

TEST(ConfiguredRun, SetUpRefusesThreadsForOnePartitionBeforeAnyResultsDirectory) {
  const fs::path dir = testing::make_scratch_dir("runner-threads");
  RunRequest request = demo_request(dir / "out");
  request.threads = 2;
  ConfiguredRun run(request);
  ASSERT_EQ(run.agree(), kExitOk);
  EXPECT_EQ(run.set_up(), kExitBadInput);
  EXPECT_EQ(run.engine(), nullptr);
  EXPECT_FALSE(fs::exists(dir / "out"));
}

TEST(ConfiguredRun, PhasesInOrderLeaveTheResults) {
  const fs::path dir = testing::make_scratch_dir("runner-phases");
  const fs::path out = dir / "out";
  bool reported = false;
  RunRequest request = demo_request(out);
  request.on_results = [&](const engine::RunResults& results) {
    reported = true;
    EXPECT_EQ(results.status, engine::RunStatus::kCompleted);
  };
  ConfiguredRun run(request);
  ASSERT_EQ(run.agree(), kExitOk);
  EXPECT_TRUE(run.loaded().ok());
  ASSERT_EQ(run.set_up(), kExitOk);
  ASSERT_NE(run.engine(), nullptr);
  EXPECT_FALSE(fs::exists(out)) << "set_up creates no results directory";
  ASSERT_EQ(run.start(), kExitOk);
  EXPECT_TRUE(fs::is_directory(out));
  EXPECT_EQ(run.out(), out);
  ASSERT_EQ(run.run(), kExitOk);
  EXPECT_FALSE(fs::exists(out / "summary.json")) << "results are written by write()";
  ASSERT_EQ(run.gather(), kExitOk);
  EXPECT_FALSE(reported);
  EXPECT_EQ(run.write(), kExitOk);
  EXPECT_TRUE(reported);
  for (const char* file : {"summary.json", "collectives.csv", "flows.csv", "ports.csv"}) {
    EXPECT_TRUE(fs::is_regular_file(out / file)) << file;
  }
  EXPECT_EQ(run.release(kExitOk), kExitOk);
}

}  // namespace
}  // namespace etwire::runner

// The feeder over the real upstream trace collection: every file replays completely, and the
// quirks the format notes describe (forward data deps in STG traces, ctrl-dep self-references and
// dangling ids in the older PyTorch trace) behave as documented.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <set>
#include <string>
#include <vector>

#include "tests/feeder/drain.h"
#include "tests/testing/test_paths.h"
#include "trace/feeder/feeder.h"
#include "trace/node_source.h"
#include "trace/trace_error.h"

namespace etwire::feeder {
namespace {

std::vector<std::filesystem::path> upstream_et_files() {
  std::vector<std::filesystem::path> files;
  for (const auto& entry :
       std::filesystem::recursive_directory_iterator(etwire::testing::upstream_traces())) {
    if (entry.is_regular_file() && entry.path().extension() == ".et") files.push_back(entry.path());
  }
  std::sort(files.begin(), files.end());
  return files;
}

TEST(FeederUpstreamTraces, EveryFileReplaysEveryNodeOnceWithSmallWindows) {
  ETWIRE_REQUIRE_UPSTREAM_TRACES();
  std::vector<std::filesystem::path> files = upstream_et_files();
  ASSERT_FALSE(files.empty());
  for (const std::filesystem::path& file : files) {
    FeederOptions options;
    options.window = 16;
    Feeder feeder(trace::open_node_source(file.string()), options);
    std::vector<uint64_t> order = testing::drain(feeder, 4);
    EXPECT_EQ(std::set<uint64_t>(order.begin(), order.end()).size(), order.size()) << file;
    EXPECT_EQ(feeder.stats().nodes_issued, feeder.stats().nodes_read) << file;
    EXPECT_GT(feeder.stats().nodes_read, 0u) << file;
  }
}

TEST(FeederUpstreamTraces, StgForwardDataDepsAreResolved) {
  ETWIRE_REQUIRE_UPSTREAM_TRACES();
  auto file =
      etwire::testing::upstream_traces() / "astra-sim-artifacts/stg_denseA_4npus/denseA.0.et";
  FeederOptions options;
  options.window = 1;
  Feeder feeder(trace::open_node_source(file.string()), options);
  testing::drain(feeder);
  EXPECT_GT(feeder.stats().peak_unresolved, 0u) << "the STG trace has parents after children";
  EXPECT_EQ(feeder.stats().nodes_issued, feeder.stats().nodes_read);
}

TEST(FeederUpstreamTraces, OlderPytorchTraceCtrlDepsAreIgnoredByDefault) {
  ETWIRE_REQUIRE_UPSTREAM_TRACES();
  auto file =
      etwire::testing::upstream_traces() / "chakra/feeder_tests_trace_pytorch_1rank/chakra.0.et";
  Feeder feeder(trace::open_node_source(file.string()));
  testing::drain(feeder, 8);
  EXPECT_EQ(feeder.stats().nodes_issued, feeder.stats().nodes_read);
  EXPECT_EQ(feeder.stats().ctrl_self_refs_dropped, 0u);
  EXPECT_EQ(feeder.stats().ctrl_dangling_dropped, 0u);
}

TEST(FeederUpstreamTraces, OlderPytorchTraceHonouredCtrlDepsFormACycle) {
  // Its ctrl deps are caller/callee links: besides self-references and dangling ids (dropped and
  // counted), together with the data deps they loop. The error must say so and point at ctrl.
  ETWIRE_REQUIRE_UPSTREAM_TRACES();
  auto file =
      etwire::testing::upstream_traces() / "chakra/feeder_tests_trace_pytorch_1rank/chakra.0.et";
  FeederOptions options;
  options.ctrl_deps = CtrlDeps::kHonour;
  Feeder feeder(trace::open_node_source(file.string()), options);
  try {
    testing::drain(feeder, 8);
    FAIL() << "expected a dependency cycle";
  } catch (const trace::TraceError& error) {
    EXPECT_EQ(error.where().file, file.string());
    EXPECT_TRUE(error.where().record_index.has_value());
    EXPECT_TRUE(error.where().node_id.has_value());
    EXPECT_NE(error.problem().find("dependency cycle"), std::string::npos) << error.what();
    EXPECT_NE(error.problem().find("-ctrl->"), std::string::npos) << error.what();
  }
  EXPECT_GT(feeder.stats().ctrl_self_refs_dropped, 0u);
}

TEST(FeederUpstreamTraces, FsdpTraceReplaysWithCtrlDepsHonoured) {
  ETWIRE_REQUIRE_UPSTREAM_TRACES();
  for (int rank = 0; rank < 2; ++rank) {
    auto file = etwire::testing::upstream_traces() /
                ("astra-sim-hybrid-parallelism/pytorch_fsdp_2ranks/chakra_trace." +
                 std::to_string(rank) + ".et");
    FeederOptions options;
    options.ctrl_deps = CtrlDeps::kHonour;
    options.window = 64;
    Feeder feeder(trace::open_node_source(file.string()), options);
    testing::drain(feeder, 8);
    EXPECT_EQ(feeder.stats().nodes_issued, feeder.stats().nodes_read) << file;
  }
}

}  // namespace
}  // namespace etwire::feeder

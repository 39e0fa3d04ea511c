// LoadOptions::substitute_job: a trace set replayed in place of a configuration's jobs, named and
// mapped as its first job (what `etwire sweep` runs).
#include <gtest/gtest.h>

#include "tests/control/test_configs.h"

namespace etwire::control {
namespace {

using testing::load_inline;
using testing::shipped_config;

std::string bundled_trace(const std::string& name) {
  return (etwire::testing::source_dir() / "configs/traces" / name).string();
}

TEST(JobSubstitute, TakesTheFirstJobsNameAndMappingAndDropsTheOthers) {
  LoadOptions options;
  options.substitute_job = JobSubstitute{bundled_trace("alltoall_8r/alltoall"), 3, 2};
  const LoadedConfig loaded =
      load_config_file(shipped_config("mixed-allreduce-alltoall.yaml"), options);
  ASSERT_TRUE(loaded.ok()) << loaded.diagnostics.items().front().message;
  const config::RunConfig& config = loaded.config;
  ASSERT_EQ(config.workload.jobs.size(), 1u);
  EXPECT_EQ(config.workload.jobs[0].name, "allreduce");
  EXPECT_EQ(config.workload.jobs[0].trace, bundled_trace("alltoall_8r/alltoall"));
  EXPECT_EQ(config.workload.jobs[0].iterations, 3u);
  EXPECT_EQ(config.workload.jobs[0].warmup_iterations, 2u);
  ASSERT_EQ(config.mapping.jobs.size(), 1u);
  EXPECT_EQ(config.mapping.jobs[0].job, "allreduce");
  // The first job's ports: the even ones.
  ASSERT_TRUE(loaded.placements[0]);
  for (int32_t rank = 0; rank < 8; ++rank) {
    std::string even_port = "h";
    even_port += std::to_string(2 * rank);
    EXPECT_EQ(config.ports[loaded.placements[0]->port(rank)].name, even_port);
  }
  ASSERT_TRUE(loaded.traces[0]);
  EXPECT_EQ(loaded.traces[0]->world_size, 8);
}

TEST(JobSubstitute, LeavesOutWhatDescribedTheFirstJobsOwnTrace) {
  // A world size, comm groups and a filter that the substitute's trace set would fail.
  const std::string yaml = R"(workload:
  jobs:
    - name: big
      trace: traces/allreduce_8r/allreduce
      world_size: 16
      comm_groups: no-such-file.json
      filter: {process_groups: ["5"]}
ports:
  - name: p
    count: 16
)";
  EXPECT_FALSE(load_inline(yaml).ok());
  LoadOptions options;
  options.substitute_job = JobSubstitute{bundled_trace("allreduce_8r/allreduce"), 1, 0};
  const LoadedConfig loaded = load_config_text(
      yaml, "inline.yaml", (etwire::testing::source_dir() / "configs").string(), options);
  ASSERT_TRUE(loaded.ok()) << loaded.diagnostics.items().front().message;
  EXPECT_EQ(loaded.config.workload.jobs[0].name, "big");
  EXPECT_FALSE(loaded.config.workload.jobs[0].world_size);
  EXPECT_TRUE(loaded.config.workload.jobs[0].comm_groups.empty());
  EXPECT_TRUE(loaded.config.workload.jobs[0].filter.process_groups.empty());
}

TEST(JobSubstitute, OverridesComeFirst) {
  LoadOptions options;
  // Maps the first job onto the odd ports before the substitute keeps its entry.
  options.overrides = {"mapping.jobs[0].ports=[h1, h3, h5, h7, h9, h11, h13, h15]"};
  options.substitute_job = JobSubstitute{bundled_trace("allreduce_8r/allreduce"), 1, 0};
  const LoadedConfig loaded =
      load_config_file(shipped_config("mixed-allreduce-alltoall.yaml"), options);
  ASSERT_TRUE(loaded.ok()) << loaded.diagnostics.items().front().message;
  ASSERT_TRUE(loaded.placements[0]);
  EXPECT_EQ(loaded.config.ports[loaded.placements[0]->port(0)].name, "h1");
}

TEST(JobSubstitute, AMissingTraceSetIsReportedAtTheJob) {
  LoadOptions options;
  options.substitute_job = JobSubstitute{"/nonexistent/sweep/all_reduce", 1, 0};
  const LoadedConfig loaded = load_config_file(shipped_config("loopback-demo.yaml"), options);
  ASSERT_FALSE(loaded.ok());
  bool named = false;
  for (const auto& d : loaded.diagnostics.items()) {
    named = named || d.key_path == "workload.jobs[0].trace";
  }
  EXPECT_TRUE(named);
}

}  // namespace
}  // namespace etwire::control

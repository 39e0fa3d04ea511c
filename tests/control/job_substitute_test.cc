// A trace set replayed in place of a configuration's jobs, named and mapped as its first job (what
// `etwire sweep` runs): a plan derived from the configuration's, with every check run again.
#include <gtest/gtest.h>

#include "control/load/job_substitute.h"
#include "tests/control/test_configs.h"

namespace etwire::control {
namespace {

using testing::load_inline;
using testing::shipped_config;

std::string bundled_trace(const std::string& name) {
  return (etwire::testing::source_dir() / "configs/traces" / name).string();
}

PlanChange substitute(const JobSubstitute& trace) {
  return PlanChange{[trace](config::RunConfig& config) { substitute_job(config, trace); },
                    {substitute_setting(trace)}};
}

TEST(JobSubstitute, TakesTheFirstJobsNameAndMappingAndDropsTheOthers) {
  const RunPlan base = load_config_file(shipped_config("mixed-allreduce-alltoall.yaml"));
  ASSERT_TRUE(base.ok()) << base.diagnostics.to_text();
  const RunPlan loaded =
      derive_plan(base, substitute(JobSubstitute{bundled_trace("alltoall_8r/alltoall"), 3, 2}));
  ASSERT_TRUE(loaded.ok()) << loaded.diagnostics.to_text();
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
  ASSERT_TRUE(loaded.trace_sets[0]);
  EXPECT_EQ(loaded.trace_sets[0]->spec(), bundled_trace("alltoall_8r/alltoall"));
  // The base is as it was, and the digest tells the two apart.
  EXPECT_EQ(base.config.workload.jobs.size(), 2u);
  EXPECT_NE(loaded.config_digest, base.config_digest);
  EXPECT_EQ(loaded.settings.back(), "substitute_job: alltoall_8r/alltoall x 3 + 2 warm-up");
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
  const RunPlan base = load_inline(yaml);
  EXPECT_FALSE(base.ok());
  const RunPlan loaded =
      derive_plan(base, substitute(JobSubstitute{bundled_trace("allreduce_8r/allreduce"), 1, 0}));
  ASSERT_TRUE(loaded.ok()) << loaded.diagnostics.to_text();
  EXPECT_EQ(loaded.config.workload.jobs[0].name, "big");
  EXPECT_FALSE(loaded.config.workload.jobs[0].world_size);
  EXPECT_TRUE(loaded.config.workload.jobs[0].comm_groups.empty());
  EXPECT_TRUE(loaded.config.workload.jobs[0].filter.process_groups.empty());
}

TEST(JobSubstitute, OverridesComeFirst) {
  LoadOptions options;
  // Maps the first job onto the odd ports before the substitute keeps its entry.
  options.overrides = {"mapping.jobs[0].ports=[h1, h3, h5, h7, h9, h11, h13, h15]"};
  const RunPlan base = load_config_file(shipped_config("mixed-allreduce-alltoall.yaml"), options);
  const RunPlan loaded =
      derive_plan(base, substitute(JobSubstitute{bundled_trace("allreduce_8r/allreduce"), 1, 0}));
  ASSERT_TRUE(loaded.ok()) << loaded.diagnostics.to_text();
  ASSERT_TRUE(loaded.placements[0]);
  EXPECT_EQ(loaded.config.ports[loaded.placements[0]->port(0)].name, "h1");
}

TEST(JobSubstitute, AMissingTraceSetIsReportedAtTheJob) {
  const RunPlan base = load_config_file(shipped_config("loopback-demo.yaml"));
  const RunPlan loaded =
      derive_plan(base, substitute(JobSubstitute{"/nonexistent/sweep/all_reduce", 1, 0}));
  ASSERT_FALSE(loaded.ok());
  bool named = false;
  for (const auto& d : loaded.diagnostics.items()) {
    named = named || d.key_path == "workload.jobs[0].trace";
  }
  EXPECT_TRUE(named);
}

}  // namespace
}  // namespace etwire::control

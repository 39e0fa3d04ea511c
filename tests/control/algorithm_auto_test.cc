// `collectives.algorithms.<type>: auto`: the tuner picks the algorithm per collective, among
// NCCL's for the type, by the same model as the protocol; the plan prints each algorithm's time
// and the pick, and types NCCL has one algorithm for refuse it.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <numeric>

#include "config/enum_names.h"
#include "control/plan/collective_choice.h"
#include "control/plan/plan_report.h"
#include "control/plan/traffic_plan.h"
#include "tests/control/test_configs.h"

namespace etwire::control {
namespace {

using collectives::Algorithm;
using ::testing::HasSubstr;
using trace::CollectiveType;

constexpr size_t kAllReduce = static_cast<size_t>(CollectiveType::kAllReduce);

// Two servers of eight ranks with 400 Gb/s NICs and NVLink inside.
collectives::CollectiveSpec two_servers(CollectiveType type, uint64_t bytes) {
  collectives::CollectiveSpec spec;
  spec.collective = type;
  spec.ranks.resize(16);
  std::iota(spec.ranks.begin(), spec.ranks.end(), 0);
  spec.ranks_per_host = 8;
  spec.bytes = bytes;
  return spec;
}

const collectives::TunerLinks kLinks{50e9, 450e9};

double time_of(const CollectiveChoice& choice, Algorithm a) {
  return choice.algorithm_time_us[static_cast<size_t>(a)];
}

TEST(AlgorithmAuto, PicksTheFastestOfNcclsAlgorithmsWithItsChannels) {
  config::CollectivesConfig config;
  config.tuned_algorithms[kAllReduce] = true;
  config.protocol.automatic = true;
  config.channels = 8;
  auto small = two_servers(CollectiveType::kAllReduce, 4096);
  const CollectiveChoice tiny =
      apply_collective_choices(config, DimensionScope::kWhole, kLinks, small);
  ASSERT_TRUE(tiny.algorithm_tuned);
  // Small: the tree's log2 depth beats the ring's 30 steps, in LL.
  EXPECT_EQ(small.algorithm, Algorithm::kTree);
  EXPECT_EQ(small.protocol, config::Protocol::kLl);
  EXPECT_EQ(small.channels, 8u) << "the tree takes collectives.channels";
  EXPECT_LT(time_of(tiny, Algorithm::kNvls), 0) << "NVLS runs on one server only";
  EXPECT_LT(time_of(tiny, Algorithm::kPat), 0) << "no PAT all-reduce";
  // The pick's time is its protocol's, and no candidate's is smaller.
  EXPECT_DOUBLE_EQ(time_of(tiny, Algorithm::kTree),
                   tiny.protocol.time_us[static_cast<size_t>(config::Protocol::kLl)]);
  for (const double us : tiny.algorithm_time_us) {
    if (us >= 0) {
      EXPECT_LE(time_of(tiny, Algorithm::kTree), us);
    }
  }
  // Large: NVLS-tree, every server's eight NICs under its NVLink, beats the ring's 2(n-1)/n.
  auto large = two_servers(CollectiveType::kAllReduce, 1ull << 30);
  const CollectiveChoice big =
      apply_collective_choices(config, DimensionScope::kWhole, kLinks, large);
  EXPECT_EQ(large.algorithm, Algorithm::kNvlsTree);
  EXPECT_EQ(large.protocol, config::Protocol::kSimple);
  EXPECT_FALSE(large.channels) << "NVLS-tree takes no channels";
  EXPECT_LT(time_of(big, Algorithm::kNvlsTree), time_of(big, Algorithm::kRing));
}

// With the protocol fixed, the algorithms are weighed in it: NVLS-tree, Simple only, is no
// candidate under LL, and the ring runs what no algorithm can (a group of one rank).
TEST(AlgorithmAuto, AFixedProtocolLimitsTheCandidates) {
  config::CollectivesConfig config;
  config.tuned_algorithms[kAllReduce] = true;
  config.protocol.protocol = config::Protocol::kLl;
  auto spec = two_servers(CollectiveType::kAllReduce, 1ull << 30);
  const CollectiveChoice choice =
      apply_collective_choices(config, DimensionScope::kWhole, kLinks, spec);
  EXPECT_LT(time_of(choice, Algorithm::kNvlsTree), 0);
  EXPECT_NE(spec.algorithm, Algorithm::kNvlsTree);
  EXPECT_EQ(spec.protocol, config::Protocol::kLl);
  auto alone = two_servers(CollectiveType::kAllReduce, 4096);
  alone.ranks = {3};
  apply_collective_choices(config, DimensionScope::kWhole, kLinks, alone);
  EXPECT_EQ(alone.algorithm, Algorithm::kRing);
}

// PAT for an all-gather of one rank per server while it is small, the ring once it is large.
TEST(AlgorithmAuto, AllGatherTakesPatWhenSmallOnOneRankPerServer) {
  config::CollectivesConfig config;
  config.tuned_algorithms[static_cast<size_t>(CollectiveType::kAllGather)] = true;
  auto spec = two_servers(CollectiveType::kAllGather, 4096);
  spec.ranks_per_host = 1;
  apply_collective_choices(config, DimensionScope::kWhole, kLinks, spec);
  EXPECT_EQ(spec.algorithm, Algorithm::kPat);
  spec.bytes = 256 << 20;
  apply_collective_choices(config, DimensionScope::kWhole, kLinks, spec);
  EXPECT_EQ(spec.algorithm, Algorithm::kRing);
}

// `auto` is an explicit choice: it wins over involved_dim's hierarchical all-reduce.
TEST(AlgorithmAuto, WinsOverTheHierarchyOfInvolvedDim) {
  config::CollectivesConfig config;
  config.tuned_algorithms[kAllReduce] = true;
  config.hierarchy = config::Hierarchy::kInvolvedDim;
  auto spec = two_servers(CollectiveType::kAllReduce, 4096);
  apply_collective_choices(config, DimensionScope::kBoth, kLinks, spec);
  EXPECT_NE(spec.algorithm, Algorithm::kHierarchical);
}

const char* kTwoServers = R"(workload:
  jobs:
    - trace: traces/allreduce_8r/allreduce
ports:
  - name: p
    count: 8
    speed: 400Gbps
mapping:
  jobs:
    - hosts:
        ranks_per_host: 4
        bandwidth: 3600Gbps
collectives:
  algorithms:
    all_reduce: auto
)";

TEST(AlgorithmAuto, ThePlanPrintsEachAlgorithmsTimeAndThePick) {
  const RunPlan loaded = testing::load_inline(kTwoServers);
  ASSERT_TRUE(loaded.ok()) << loaded.diagnostics.to_text();
  EXPECT_TRUE(loaded.config.collectives.algorithm_tuned(CollectiveType::kAllReduce));
  EXPECT_FALSE(loaded.config.collectives.algorithm_for(CollectiveType::kAllReduce));
  Diagnostics problems;
  const TrafficPlan plan = plan_traffic(loaded, problems);
  ASSERT_EQ(plan.tuner_choices.size(), 1u);
  const TunerPick& pick = plan.tuner_choices[0];
  ASSERT_TRUE(pick.choice.algorithm_tuned);
  const std::string name(collectives::algorithm_name(pick.algorithm));
  const std::string text = plan_to_text(loaded, plan);
  EXPECT_THAT(text, HasSubstr("Algorithm auto (per collective"));
  EXPECT_THAT(text, HasSubstr("nvls-tree us"));
  EXPECT_THAT(text, HasSubstr(" " + name + " "));
  const auto json = plan_to_json(loaded, plan);
  ASSERT_EQ(json["algorithm_choices"].size(), 1u);
  EXPECT_EQ(json["algorithm_choices"][0]["algorithm"], name);
  EXPECT_EQ(json["algorithm_choices"][0]["protocol"], "simple");
  EXPECT_TRUE(json["algorithm_choices"][0]["model_us"]["nvls"].is_null());
  EXPECT_GT(json["algorithm_choices"][0]["model_us"]["ring"].get<double>(), 0);
  // Without auto the plan has no algorithm table.
  const RunPlan fixed = testing::load_inline(std::string(testing::kMinimalConfig));
  ASSERT_TRUE(fixed.ok());
  const TrafficPlan fixed_plan = plan_traffic(fixed, problems);
  EXPECT_THAT(plan_to_text(fixed, fixed_plan), ::testing::Not(HasSubstr("Algorithm auto")));
  EXPECT_FALSE(plan_to_json(fixed, fixed_plan).contains("algorithm_choices"));
}

TEST(AlgorithmAuto, TypesWithOneNcclAlgorithmRefuseIt) {
  const RunPlan loaded = testing::load_inline(std::string(testing::kMinimalConfig) +
                                              "collectives:\n  algorithms:\n    broadcast: auto\n");
  const Diagnostic* error = testing::only_error(loaded);
  ASSERT_NE(error, nullptr);
  EXPECT_EQ(error->key_path, "collectives.algorithms.broadcast");
  EXPECT_EQ(error->where.line, 9);
  EXPECT_THAT(error->message, HasSubstr("all_reduce, all_gather and reduce_scatter only"));
  EXPECT_THAT(error->message, HasSubstr("ring, direct"));
  // An unknown name lists auto where it applies.
  const RunPlan unknown = testing::load_inline(
      std::string(testing::kMinimalConfig) + "collectives:\n  algorithms:\n    all_gather: fast\n");
  const Diagnostic* listed = testing::only_error(unknown);
  ASSERT_NE(listed, nullptr);
  EXPECT_THAT(listed->message, HasSubstr("pat, auto"));
}

}  // namespace
}  // namespace etwire::control

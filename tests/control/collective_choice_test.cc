// collectives.hierarchy and the choices the run and the plan share: how involved_dim reads, and
// which algorithm and channels a collective gets.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "control/plan/collective_choice.h"
#include "tests/control/test_configs.h"

namespace etwire::control {
namespace {

using ::testing::HasSubstr;

TEST(DimensionScope, DimensionZeroAloneIsWithinHostsAndTheOthersAcross) {
  EXPECT_EQ(dimension_scope({}), DimensionScope::kWhole);
  EXPECT_EQ(dimension_scope({true}), DimensionScope::kWhole);
  EXPECT_EQ(dimension_scope({false}), DimensionScope::kPartial);
  EXPECT_EQ(dimension_scope({true, true}), DimensionScope::kBoth);
  EXPECT_EQ(dimension_scope({true, true, true}), DimensionScope::kBoth);
  EXPECT_EQ(dimension_scope({true, false}), DimensionScope::kWithinHosts);
  EXPECT_EQ(dimension_scope({true, false, false}), DimensionScope::kWithinHosts);
  EXPECT_EQ(dimension_scope({false, true}), DimensionScope::kAcrossHosts);
  EXPECT_EQ(dimension_scope({false, true, true}), DimensionScope::kAcrossHosts);
  EXPECT_EQ(dimension_scope({false, false}), DimensionScope::kPartial);
  EXPECT_EQ(dimension_scope({true, true, false}), DimensionScope::kPartial);
  EXPECT_EQ(dimension_scope({false, true, false}), DimensionScope::kPartial);
}

TEST(GroupPart, AHostsRanksOrARailsRanksInGroupOrder) {
  const std::vector<int32_t> group{9, 0, 1, 2, 3, 4, 5, 6, 7, 8};
  const GroupPart host = group_part(group, DimensionScope::kWithinHosts, 5, 4);
  EXPECT_EQ(host.members, (std::vector<int32_t>{4, 5, 6, 7}));
  EXPECT_EQ(host.index, 1u);
  const GroupPart rail = group_part(group, DimensionScope::kAcrossHosts, 5, 4);
  EXPECT_EQ(rail.members, (std::vector<int32_t>{9, 1, 5}));
  EXPECT_EQ(rail.index, 1u);
  EXPECT_EQ(group_part(group, DimensionScope::kBoth, 5, 4).members, group);
  EXPECT_EQ(group_part(group, DimensionScope::kWithinHosts, 8, 1).members,
            (std::vector<int32_t>{8}));
}

collectives::CollectiveSpec all_reduce(uint32_t ranks_per_host) {
  collectives::CollectiveSpec spec;
  spec.collective = trace::CollectiveType::kAllReduce;
  spec.ranks = {0, 1, 2, 3, 4, 5, 6, 7};
  spec.ranks_per_host = ranks_per_host;
  return spec;
}

TEST(CollectiveChoice, InvolvedDimPicksTheHierarchicalAllReduceOnHostsOnly) {
  config::CollectivesConfig config;
  auto spec = all_reduce(4);
  apply_collective_choices(config, DimensionScope::kBoth, {}, spec);
  EXPECT_FALSE(spec.algorithm) << "hierarchy off reads no involved_dim";
  config.hierarchy = config::Hierarchy::kInvolvedDim;
  apply_collective_choices(config, DimensionScope::kBoth, {}, spec);
  EXPECT_EQ(spec.algorithm, collectives::Algorithm::kHierarchical);
  spec = all_reduce(4);
  apply_collective_choices(config, DimensionScope::kWhole, {}, spec);
  EXPECT_FALSE(spec.algorithm);
  spec = all_reduce(1);
  apply_collective_choices(config, DimensionScope::kBoth, {}, spec);
  EXPECT_FALSE(spec.algorithm) << "one rank per host has no dimension 0 to reduce over";
  spec = all_reduce(4);
  spec.collective = trace::CollectiveType::kAllGather;
  apply_collective_choices(config, DimensionScope::kBoth, {}, spec);
  EXPECT_FALSE(spec.algorithm) << "only the all-reduce runs by dimension";
}

TEST(CollectiveChoice, AConfiguredAlgorithmAndChannelsWin) {
  config::CollectivesConfig config;
  config.hierarchy = config::Hierarchy::kInvolvedDim;
  config.algorithms[static_cast<size_t>(trace::CollectiveType::kAllReduce)] =
      collectives::Algorithm::kRing;
  config.channels = 4;
  auto spec = all_reduce(4);
  apply_collective_choices(config, DimensionScope::kBoth, {}, spec);
  EXPECT_EQ(spec.algorithm, collectives::Algorithm::kRing);
  EXPECT_EQ(spec.channels, 4u);
  config.algorithms[static_cast<size_t>(trace::CollectiveType::kAllReduce)] =
      collectives::Algorithm::kHalvingDoubling;
  spec = all_reduce(4);
  apply_collective_choices(config, DimensionScope::kBoth, {}, spec);
  EXPECT_FALSE(spec.channels) << "halving-doubling takes no channels";
}

TEST(CollectiveChoice, HierarchyNamesItsValues) {
  const RunPlan loaded = testing::load_inline(R"(workload:
  jobs:
    - trace: traces/allreduce_8r/allreduce
ports:
  - name: p
    count: 8
collectives:
  hierarchy: sideways
)");
  const Diagnostic* error = testing::only_error(loaded);
  ASSERT_NE(error, nullptr);
  EXPECT_THAT(error->message, HasSubstr("involved-dim"));
  EXPECT_EQ(error->where.line, 8);
}

}  // namespace
}  // namespace etwire::control

// `etwire sweep`'s command line read into the series and sizes it runs: names and sizes checked
// with messages that name the flag, sizes stepped and rounded as nccl-tests does.
#include "runner/sweep_plan.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace etwire::runner {
namespace {

using ::testing::HasSubstr;
using trace::CollectiveType;

constexpr uint64_t kKiB = 1024;
constexpr uint64_t kMiB = 1024 * kKiB;

std::string error_of(const SweepFlags& flags) {
  try {
    read_sweep_flags(flags);
  } catch (const SweepInputError& e) {
    return e.what();
  }
  return "";
}

std::string plan_error_of(const SweepFlags& flags, uint32_t ranks) {
  try {
    plan_sweep(read_sweep_flags(flags), ranks, config::CollectivesConfig{});
  } catch (const SweepInputError& e) {
    return e.what();
  }
  return "";
}

TEST(SweepPlan, DefaultsSweepAllReduceFrom1KiBTo64MiB) {
  const SweepRequest request = read_sweep_flags(SweepFlags{});
  ASSERT_EQ(request.kinds.size(), 1u);
  EXPECT_EQ(request.kinds[0], CollectiveType::kAllReduce);
  EXPECT_TRUE(request.algorithms.empty());
  EXPECT_EQ(request.sizes.front(), kKiB);
  EXPECT_EQ(request.sizes.back(), 64 * kMiB);
  EXPECT_EQ(request.sizes.size(), 17u);
  const SweepPlan plan = plan_sweep(request, 8, config::CollectivesConfig{});
  ASSERT_EQ(plan.series.size(), 1u);
  EXPECT_EQ(plan.series[0].algorithm, collectives::Algorithm::kRing);
  EXPECT_EQ(plan.points(), 17u);
  EXPECT_TRUE(plan.notes.empty());
}

TEST(SweepPlan, ReadsListsAndSizesAsNcclTestsDoes) {
  SweepFlags flags;
  flags.collectives = "all_reduce, allgather,send_recv,all_reduce";
  flags.algorithms = "ring,hd";
  flags.min_bytes = "8";
  flags.max_bytes = "100M";
  flags.step_factor = 4;
  const SweepRequest request = read_sweep_flags(flags);
  EXPECT_EQ(request.kinds,
            (std::vector<collectives::CollectiveKind>{CollectiveType::kAllReduce,
                                                      CollectiveType::kAllGather, std::nullopt}));
  EXPECT_EQ(request.algorithms,
            (std::vector<collectives::Algorithm>{collectives::Algorithm::kRing,
                                                 collectives::Algorithm::kHalvingDoubling}));
  EXPECT_EQ(request.sizes.front(), 8u);
  EXPECT_EQ(request.sizes[1], 32u);
  EXPECT_EQ(request.sizes.back(), 32 * kMiB);  // the next step, 128 MiB, is beyond 100 MiB
}

TEST(SweepPlan, BadFlagsAreNamed) {
  SweepFlags flags;
  flags.collectives = "all_reduce,allreduse";
  EXPECT_THAT(error_of(flags), HasSubstr("-c/--collectives: unknown collective \"allreduse\""));
  flags.collectives = "barrier";
  EXPECT_THAT(error_of(flags), HasSubstr("-c/--collectives: barrier moves no payload"));
  flags.collectives = "all_reduce,";
  EXPECT_THAT(error_of(flags), HasSubstr("-c/--collectives: \"all_reduce,\" has an empty item"));
  flags = SweepFlags{};
  flags.algorithms = "ring,rung";
  EXPECT_THAT(error_of(flags), HasSubstr("-a/--algorithms: unknown algorithm \"rung\""));
  flags = SweepFlags{};
  flags.min_bytes = "64MiB";
  flags.max_bytes = "1KiB";
  EXPECT_THAT(error_of(flags), HasSubstr("-b/--min-bytes 64MiB is above -e/--max-bytes 1KiB"));
  flags = SweepFlags{};
  flags.min_bytes = "lots";
  EXPECT_THAT(error_of(flags), HasSubstr("-b/--min-bytes: \"lots\" is not a byte size"));
  flags = SweepFlags{};
  flags.max_bytes = "0";
  EXPECT_THAT(error_of(flags), HasSubstr("-e/--max-bytes: a size of 0 bytes"));
  for (uint64_t factor : {0, 1}) {
    flags = SweepFlags{};
    flags.step_factor = factor;
    EXPECT_THAT(error_of(flags), HasSubstr("-f/--step-factor"));
  }
  EXPECT_EQ(error_of(SweepFlags{}), "");
}

TEST(SweepPlan, AlgorithmsRunTheCollectivesTheyApplyTo) {
  SweepFlags flags;
  flags.collectives = "all_reduce,all_to_all";
  flags.algorithms = "ring,direct";
  const SweepPlan plan = plan_sweep(read_sweep_flags(flags), 8, config::CollectivesConfig{});
  ASSERT_EQ(plan.series.size(), 2u);
  EXPECT_EQ(plan.series[0].kind, CollectiveType::kAllReduce);
  EXPECT_EQ(plan.series[0].algorithm, collectives::Algorithm::kRing);
  EXPECT_EQ(plan.series[1].kind, CollectiveType::kAllToAll);
  EXPECT_EQ(plan.series[1].algorithm, collectives::Algorithm::kDirect);
  // Each pair left out is said.
  ASSERT_EQ(plan.notes.size(), 2u);
  EXPECT_THAT(plan.notes[0], HasSubstr("direct does not run all_reduce"));
  EXPECT_THAT(plan.notes[1], HasSubstr("ring does not run all_to_all"));

  flags.collectives = "all_to_all";
  flags.algorithms = "ring";
  EXPECT_THAT(plan_error_of(flags, 8),
              HasSubstr("-a/--algorithms: none of them runs the collectives swept "
                        "(all_to_all: direct, pxn)"));
}

TEST(SweepPlan, WithoutAlgorithmsTheConfigurationChooses) {
  config::CollectivesConfig configured;
  configured.algorithms[static_cast<size_t>(CollectiveType::kAllReduce)] =
      collectives::Algorithm::kDoubleBinaryTree;
  SweepFlags flags;
  flags.collectives = "all_reduce,all_gather";
  const SweepPlan plan = plan_sweep(read_sweep_flags(flags), 8, configured);
  ASSERT_EQ(plan.series.size(), 2u);
  EXPECT_EQ(plan.series[0].algorithm, collectives::Algorithm::kDoubleBinaryTree);
  EXPECT_EQ(plan.series[1].algorithm, collectives::Algorithm::kRing);  // its default
}

// `auto` in collectives.algorithms or in -a: a series of the tuner's picks, after the named
// algorithms' series, for the collectives NCCL's tuner chooses for; the others say it is left out.
TEST(SweepPlan, AutoIsASeriesOfTheTunersPicks) {
  config::CollectivesConfig configured;
  configured.tuned_algorithms[static_cast<size_t>(CollectiveType::kAllReduce)] = true;
  SweepFlags flags;
  flags.collectives = "all_reduce";
  const SweepPlan from_config = plan_sweep(read_sweep_flags(flags), 8, configured);
  ASSERT_EQ(from_config.series.size(), 1u);
  EXPECT_TRUE(from_config.series[0].tuned);

  flags.collectives = "all_reduce,broadcast";
  flags.algorithms = "auto,ring";
  const SweepRequest request = read_sweep_flags(flags);
  EXPECT_TRUE(request.tuned);
  const SweepPlan plan = plan_sweep(request, 8, config::CollectivesConfig{});
  ASSERT_EQ(plan.series.size(), 3u);
  EXPECT_FALSE(plan.series[0].tuned);
  EXPECT_EQ(plan.series[0].algorithm, collectives::Algorithm::kRing);
  EXPECT_TRUE(plan.series[1].tuned);
  EXPECT_EQ(plan.series[1].kind, CollectiveType::kAllReduce);
  EXPECT_EQ(plan.series[2].kind, CollectiveType::kBroadcast);
  EXPECT_FALSE(plan.series[2].tuned);
  ASSERT_EQ(plan.notes.size(), 1u);
  EXPECT_THAT(plan.notes[0], HasSubstr("auto does not run broadcast"));

  flags.collectives = "broadcast";
  flags.algorithms = "auto";
  EXPECT_THAT(plan_error_of(flags, 8), HasSubstr("none of them runs the collectives swept"));
}

TEST(SweepPlan, SizesAreRoundedAndTheRoundingIsSaid) {
  SweepFlags flags;
  flags.collectives = "all_reduce,all_gather";
  flags.min_bytes = "10";
  flags.max_bytes = "1000";
  flags.step_factor = 10;
  const SweepPlan plan = plan_sweep(read_sweep_flags(flags), 8, config::CollectivesConfig{});
  ASSERT_EQ(plan.series.size(), 2u);
  // all_reduce: whole 4-byte elements.
  EXPECT_EQ(plan.series[0].sizes,
            (std::vector<std::pair<uint64_t, uint64_t>>{{10, 8}, {100, 100}, {1000, 1000}}));
  // all_gather over 8 ranks: multiples of 128 bytes; 10 and 100 round to nothing.
  EXPECT_EQ(plan.series[1].sizes, (std::vector<std::pair<uint64_t, uint64_t>>{{1000, 896}}));
  ASSERT_EQ(plan.notes.size(), 3u);
  EXPECT_THAT(plan.notes[0], HasSubstr("all_reduce: 1 size rounded down, as nccl-tests rounds "
                                       "them, to whole 4-byte elements: 10 -> 8"));
  EXPECT_THAT(plan.notes[1],
              HasSubstr("all_gather: 3 sizes rounded down, as nccl-tests rounds them, to 8 "
                        "blocks of a multiple of 16 bytes (one per rank): 10 -> 0, 100 -> 0, "
                        "1000 -> 896"));
  EXPECT_THAT(plan.notes[2], HasSubstr("all_gather: 10, 100 left out"));

  flags.collectives = "all_gather";
  flags.max_bytes = "100";
  EXPECT_THAT(plan_error_of(flags, 8),
              HasSubstr("every size rounds to 0 bytes for all_gather over 8 ranks; it needs at "
                        "least 128 bytes"));
}

TEST(SweepPlan, SendRecvNeedsTwoRanks) {
  SweepFlags flags;
  flags.collectives = "send_recv";
  EXPECT_THAT(plan_error_of(flags, 1), HasSubstr("send_recv needs 2 ranks or more"));
  const SweepPlan plan = plan_sweep(read_sweep_flags(flags), 2, config::CollectivesConfig{});
  ASSERT_EQ(plan.series.size(), 1u);
  EXPECT_EQ(plan.series[0].algorithm, collectives::Algorithm::kDirect);
}

}  // namespace
}  // namespace etwire::runner

#include "collectives/bandwidth.h"

#include <gtest/gtest.h>

namespace etwire::collectives {
namespace {

using trace::CollectiveType;

TEST(Bandwidth, BusbwFactorsAreTheNcclTestsDefinitions) {
  for (uint32_t n : {1u, 2u, 3u, 8u, 1024u}) {
    const double share = double(n - 1) / n;
    EXPECT_DOUBLE_EQ(busbw_factor(CollectiveType::kAllReduce, n), 2 * share);
    for (CollectiveType t : {CollectiveType::kReduceScatter, CollectiveType::kReduceScatterBlock,
                             CollectiveType::kAllGather, CollectiveType::kAllToAll,
                             CollectiveType::kGather, CollectiveType::kScatter}) {
      EXPECT_DOUBLE_EQ(busbw_factor(t, n), share);
    }
    EXPECT_DOUBLE_EQ(busbw_factor(CollectiveType::kBroadcast, n), 1);
    EXPECT_DOUBLE_EQ(busbw_factor(CollectiveType::kReduce, n), 1);
    EXPECT_DOUBLE_EQ(busbw_factor(std::nullopt, n), 1);
    EXPECT_DOUBLE_EQ(busbw_factor(CollectiveType::kBarrier, n), 0);
  }
  EXPECT_EQ(busbw_formula(CollectiveType::kAllReduce), "2(n-1)/n");
  EXPECT_EQ(busbw_formula(CollectiveType::kAllGather), "(n-1)/n");
  EXPECT_EQ(busbw_formula(CollectiveType::kBroadcast), "1");
}

TEST(Bandwidth, AlgbwBusbwAndIdealPercent) {
  // 8 ranks, 1 GB all-reduce in 20 ms: algbw 50 GB/s, busbw 87.5 GB/s.
  EXPECT_DOUBLE_EQ(algbw(1'000'000'000, 0.02), 50e9);
  EXPECT_DOUBLE_EQ(busbw(CollectiveType::kAllReduce, 8, 1'000'000'000, 0.02), 87.5e9);
  EXPECT_DOUBLE_EQ(ideal_percent(87.5e9, 50e9 * 2), 87.5);
  EXPECT_EQ(algbw(100, 0), 0);
  EXPECT_EQ(ideal_percent(1, 0), 0);
}

}  // namespace
}  // namespace etwire::collectives

#include "trace/feeder/seen_id_set.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <set>
#include <vector>

namespace etwire::feeder {
namespace {

TEST(SeenIdSet, AscendingDenseIdsCollapseToOneRun) {
  SeenIdSet seen;
  for (uint64_t id = 0; id < 1000000; ++id) ASSERT_TRUE(seen.insert(id));
  EXPECT_EQ(seen.run_count(), 1u);
  EXPECT_LE(seen.partial_word_count(), 1u);
  EXPECT_LT(seen.memory_bytes(), 4096u);
  EXPECT_TRUE(seen.contains(0));
  EXPECT_TRUE(seen.contains(999999));
  EXPECT_FALSE(seen.contains(1000000));
  EXPECT_FALSE(seen.insert(123456));
}

TEST(SeenIdSet, DescendingDenseIdsCollapseToo) {
  SeenIdSet seen;
  for (uint64_t id = 640000; id-- > 0;) ASSERT_TRUE(seen.insert(id));
  EXPECT_EQ(seen.run_count(), 1u);
  EXPECT_TRUE(seen.contains(5));
  EXPECT_FALSE(seen.contains(640000));
}

TEST(SeenIdSet, SparseIdsCostFarLessThanAnIntervalEach) {
  SeenIdSet seen;
  for (uint64_t id = 0; id < 3000000; id += 3) ASSERT_TRUE(seen.insert(id));
  EXPECT_TRUE(seen.contains(2999997));
  EXPECT_FALSE(seen.contains(2999998));
  // 1M ids over a span of 3M: a list of intervals would need 16 bytes per id.
  EXPECT_LT(seen.memory_bytes(), 3u * 1000000u);
}

TEST(SeenIdSet, ExtremeIdsWork) {
  SeenIdSet seen;
  EXPECT_TRUE(seen.insert(UINT64_MAX));
  EXPECT_TRUE(seen.insert(0));
  EXPECT_TRUE(seen.insert(UINT64_MAX - 63));
  EXPECT_TRUE(seen.contains(UINT64_MAX));
  EXPECT_FALSE(seen.contains(UINT64_MAX - 1));
  EXPECT_FALSE(seen.insert(UINT64_MAX));
}

TEST(SeenIdSet, MatchesAStdSetUnderRandomInsertOrders) {
  std::mt19937_64 rng(11);
  for (int round = 0; round < 40; ++round) {
    SeenIdSet seen;
    std::set<uint64_t> reference;
    uint64_t span = 64 + rng() % 5000;
    uint64_t base = (round % 2) ? rng() >> 1 : 0;
    std::vector<uint64_t> ids;
    for (uint64_t i = 0; i < span; ++i) {
      if (rng() % 4 != 0) ids.push_back(base + i);
    }
    // Mostly ascending with local shuffles, sometimes fully random, with repeats mixed in.
    if (round % 3 == 0) {
      std::shuffle(ids.begin(), ids.end(), rng);
    } else {
      for (size_t i = 0; i + 8 < ids.size(); i += 8)
        std::shuffle(ids.begin() + i, ids.begin() + i + 8, rng);
    }
    for (size_t i = 0; i < ids.size(); ++i) {
      uint64_t id = (i % 7 == 3 && i > 0) ? ids[rng() % i] : ids[i];
      ASSERT_EQ(seen.insert(id), reference.insert(id).second) << id;
    }
    for (size_t i = 0; i < ids.size(); ++i)
      ASSERT_TRUE(seen.insert(ids[i]) == (reference.insert(ids[i]).second));
    for (uint64_t i = 0; i < span + 64; ++i) {
      ASSERT_EQ(seen.contains(base + i), reference.count(base + i) == 1) << base + i;
    }
  }
}

}  // namespace
}  // namespace etwire::feeder

#include "trace/feeder/flat_id_map.h"

#include <gtest/gtest.h>

#include <map>
#include <random>

namespace etwire::feeder {
namespace {

using SlotMap = FlatIdMap<uint32_t, UINT32_MAX>;

TEST(FlatIdMap, InsertFindErase) {
  SlotMap map;
  EXPECT_EQ(map.find(5), UINT32_MAX);
  map.insert_or_assign(5, 50);
  map.insert_or_assign(0, 7);
  map.insert_or_assign(UINT64_MAX, 9);
  EXPECT_EQ(map.size(), 3u);
  EXPECT_EQ(map.find(5), 50u);
  EXPECT_EQ(map.find(0), 7u);
  EXPECT_EQ(map.find(UINT64_MAX), 9u);
  map.insert_or_assign(5, 51);
  EXPECT_EQ(map.find(5), 51u);
  EXPECT_EQ(map.size(), 3u);
  EXPECT_EQ(map.erase(5), 51u);
  EXPECT_EQ(map.erase(5), UINT32_MAX);
  EXPECT_EQ(map.find(5), UINT32_MAX);
  EXPECT_EQ(map.size(), 2u);
}

TEST(FlatIdMap, SlidingWindowChurnMatchesStdMap) {
  // Insert ids in a sliding window and erase behind it, the way the feeder uses the map, plus
  // random keys that collide in clusters.
  std::mt19937_64 rng(3);
  SlotMap map;
  std::map<uint64_t, uint32_t> reference;
  for (uint64_t step = 0; step < 200000; ++step) {
    uint64_t id = (step % 5 == 0) ? (rng() % 512) * 1024 : step;
    uint32_t value = static_cast<uint32_t>(rng() % 1000000);
    map.insert_or_assign(id, value);
    reference[id] = value;
    if (step >= 300) {
      uint64_t old = step - 300;
      ASSERT_EQ(map.erase(old), reference.count(old) ? reference[old] : UINT32_MAX);
      reference.erase(old);
    }
    if (step % 997 == 0) {
      ASSERT_EQ(map.size(), reference.size());
      for (const auto& [key, stored] : reference) ASSERT_EQ(map.find(key), stored);
    }
  }
  size_t visited = 0;
  map.for_each([&](uint64_t key, uint32_t value) {
    ++visited;
    EXPECT_EQ(reference.at(key), value);
  });
  EXPECT_EQ(visited, reference.size());
  map.clear();
  EXPECT_TRUE(map.empty());
  EXPECT_EQ(map.find(reference.begin()->first), UINT32_MAX);
}

}  // namespace
}  // namespace etwire::feeder

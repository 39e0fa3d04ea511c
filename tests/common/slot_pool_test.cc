// SlotPool: a released slot is the next one reused, so the pool stops growing at its peak.
#include "common/slot_pool.h"

#include <gtest/gtest.h>

#include <string>

namespace etwire {
namespace {

TEST(SlotPool, ReleasedSlotsAreReusedAndValuesComeBack) {
  SlotPool<std::string> pool;
  const uint32_t a = pool.put("a");
  const uint32_t b = pool.put("b");
  EXPECT_NE(a, b);
  EXPECT_EQ(pool.take(a), "a");
  const uint32_t c = pool.put("c");
  EXPECT_EQ(c, a) << "the released slot is reused before the pool grows";
  EXPECT_EQ(pool.take(b), "b");
  EXPECT_EQ(pool.take(c), "c");
  EXPECT_EQ(pool.put("d"), c);
  EXPECT_EQ(pool.put("e"), b);
  EXPECT_EQ(pool.put("f"), 2u);
}

}  // namespace
}  // namespace etwire

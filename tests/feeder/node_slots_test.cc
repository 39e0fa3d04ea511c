#include "trace/feeder/node_slots.h"

#include <gtest/gtest.h>

#include <set>
#include <vector>

namespace etwire::feeder {
namespace {

// Every slot is a node of its own, which stays where it is while slots are added across chunks,
// and the room held follows the slots: a feeder holding a few nodes holds room for a few.
TEST(NodeSlots, SlotsStayPutAndRoomFollowsTheSlots) {
  NodeSlots slots;
  EXPECT_EQ(slots.capacity(), 0u);
  std::vector<const trace::TraceNode*> where;
  for (uint32_t i = 0; i < 2000; ++i) {
    ASSERT_EQ(slots.add(), i);
    slots[i].id = 1000 + i;
    where.push_back(&slots[i]);
    EXPECT_LT(slots.capacity(), i + 1 + 16) << "after " << i + 1 << " slots";
  }
  std::set<const trace::TraceNode*> distinct(where.begin(), where.end());
  EXPECT_EQ(distinct.size(), where.size());
  for (uint32_t i = 0; i < 2000; ++i) {
    EXPECT_EQ(&slots[i], where[i]) << "slot " << i << " moved";
    EXPECT_EQ(slots[i].id, 1000u + i) << "slot " << i;
  }
  NodeSlots few;
  for (int i = 0; i < 3; ++i) few.add();
  EXPECT_LE(few.capacity(), 16u);
}

}  // namespace
}  // namespace etwire::feeder

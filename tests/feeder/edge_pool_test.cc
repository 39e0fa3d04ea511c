#include "trace/feeder/edge_pool.h"

#include <gtest/gtest.h>

#include <utility>
#include <vector>

#include "common/ring_queue.h"
#include "trace/feeder/ready_queue.h"

namespace etwire::feeder {
namespace {

using Edges = std::vector<std::pair<uint32_t, EdgeKind>>;

Edges collect(EdgePool& pool, EdgeList& list) {
  Edges out;
  pool.release(list, [&](uint32_t child, EdgeKind kind) { out.emplace_back(child, kind); });
  return out;
}

TEST(EdgePool, ListsKeepInsertionOrderAndKind) {
  EdgePool pool;
  EdgeList a;
  EdgeList b;
  pool.append(a, 3, EdgeKind::kData);
  pool.append(b, 9, EdgeKind::kCtrl);
  pool.append(a, 1, EdgeKind::kCtrl);
  pool.append(a, 0x7fffffff, EdgeKind::kData);
  EXPECT_EQ(pool.live_edges(), 4u);
  EXPECT_EQ(collect(pool, a),
            (Edges{{3, EdgeKind::kData}, {1, EdgeKind::kCtrl}, {0x7fffffff, EdgeKind::kData}}));
  EXPECT_TRUE(a.empty());
  EXPECT_EQ(collect(pool, b), (Edges{{9, EdgeKind::kCtrl}}));
  EXPECT_EQ(pool.live_edges(), 0u);
}

TEST(EdgePool, ReleasedEdgesAreReusedWithoutGrowing) {
  EdgePool pool;
  EdgeList list;
  for (int round = 0; round < 1000; ++round) {
    for (uint32_t child = 0; child < 16; ++child) pool.append(list, child, EdgeKind::kData);
    ASSERT_EQ(collect(pool, list).size(), 16u);
  }
  EXPECT_EQ(pool.capacity(), 16u);
}

TEST(EdgePool, RejectsChildNumbersThatCollideWithTheKindBit) {
  EdgePool pool;
  EdgeList list;
  EXPECT_THROW(pool.append(list, 0x80000000u, EdgeKind::kData), std::length_error);
}

TEST(RingQueue, FifoAcrossWrapAndGrowth) {
  RingQueue<uint32_t> queue;
  uint32_t next_in = 0;
  uint32_t next_out = 0;
  for (int round = 0; round < 100; ++round) {
    for (int i = 0; i < round % 37; ++i) queue.push_back(next_in++);
    for (int i = 0; i < round % 23 && !queue.empty(); ++i) ASSERT_EQ(queue.pop_front(), next_out++);
  }
  while (!queue.empty()) ASSERT_EQ(queue.pop_front(), next_out++);
  EXPECT_EQ(next_in, next_out);
}

TEST(ReadyQueue, StartTimeHeapOrdersByStartThenFileOrder) {
  ReadyQueue queue(Policy::kStartTime);
  trace::TraceNode node;
  const uint64_t starts[] = {5, 1, 5, 0, 1};
  for (uint32_t slot = 0; slot < 5; ++slot) {
    node.start_time_us = starts[slot];
    queue.push(slot, node, /*file_order=*/slot);
  }
  std::vector<uint32_t> order;
  while (!queue.empty()) order.push_back(queue.pop());
  EXPECT_EQ(order, (std::vector<uint32_t>{3, 1, 4, 0, 2}));
}

}  // namespace
}  // namespace etwire::feeder

// The workers' record rings: order, a full ring drops and counts instead of waiting, and a
// producer and a consumer on two threads lose nothing while there is room.
#include "engine/telemetry/record_ring.h"

#include <gtest/gtest.h>

#include <thread>
#include <vector>

namespace etwire::telemetry {
namespace {

Record flow(int64_t fct) {
  return Record::of(FlowSample{0, 0, 0, false, fct});
}

std::vector<int64_t> drain_fcts(RecordRing& ring) {
  std::vector<int64_t> fcts;
  ring.drain([&](const Record& r) {
    EXPECT_EQ(r.type, RecordType::kFlow);
    fcts.push_back(r.flow.fct_ns);
  });
  return fcts;
}

TEST(RecordRing, CapacityMustBeAPowerOfTwo) {
  EXPECT_THROW(RecordRing(0), std::invalid_argument);
  EXPECT_THROW(RecordRing(12), std::invalid_argument);
  EXPECT_EQ(RecordRing(16).capacity(), 16u);
}

TEST(RecordRing, DrainsInPushOrder) {
  RecordRing ring(8);
  for (int64_t i = 1; i <= 5; ++i) EXPECT_TRUE(ring.push(flow(i)));
  EXPECT_EQ(drain_fcts(ring), (std::vector<int64_t>{1, 2, 3, 4, 5}));
  EXPECT_TRUE(drain_fcts(ring).empty());
  // Wrapping around the end of the slots keeps the order.
  for (int64_t i = 6; i <= 12; ++i) EXPECT_TRUE(ring.push(flow(i)));
  EXPECT_EQ(drain_fcts(ring), (std::vector<int64_t>{6, 7, 8, 9, 10, 11, 12}));
}

TEST(RecordRing, AFullRingDropsAndCountsNewRecords) {
  RecordRing ring(4);
  for (int64_t i = 1; i <= 4; ++i) EXPECT_TRUE(ring.push(flow(i)));
  EXPECT_FALSE(ring.push(flow(5)));
  EXPECT_FALSE(ring.push(flow(6)));
  EXPECT_EQ(ring.dropped(), 2u);
  // What was in the ring is intact, and after a drain there is room again.
  EXPECT_EQ(drain_fcts(ring), (std::vector<int64_t>{1, 2, 3, 4}));
  EXPECT_TRUE(ring.push(flow(7)));
  EXPECT_EQ(drain_fcts(ring), (std::vector<int64_t>{7}));
  EXPECT_EQ(ring.dropped(), 2u);
}

TEST(RecordRing, ProducerAndConsumerThreadsLoseNothingWithRoom) {
  constexpr int64_t kRecords = 200'000;
  RecordRing ring(1 << 10);
  std::thread producer([&] {
    for (int64_t i = 0; i < kRecords; ++i) {
      while (!ring.push(flow(i))) std::this_thread::yield();
    }
  });
  int64_t expected = 0;
  bool in_order = true;
  while (expected < kRecords) {
    ring.drain([&](const Record& r) {
      if (r.flow.fct_ns != expected) in_order = false;
      ++expected;
    });
  }
  producer.join();
  EXPECT_TRUE(in_order);
  EXPECT_EQ(expected, kRecords);
}

}  // namespace
}  // namespace etwire::telemetry

#include "clock/event_heap.h"

#include <gtest/gtest.h>

#include <map>
#include <random>
#include <utility>

namespace etwire::clock {
namespace {

TEST(EventHeap, EmptyAndSingle) {
  EventHeap heap;
  EXPECT_TRUE(heap.empty());
  EXPECT_EQ(heap.next_time(), kNever);
  heap.push(ScheduledEvent{42, 7, nullptr, 9});
  EXPECT_EQ(heap.size(), 1u);
  EXPECT_EQ(heap.next_time(), 42);
  EXPECT_EQ(heap.next_sequence(), 7u);
  const ScheduledEvent event = heap.pop();
  EXPECT_EQ(event.when, 42);
  EXPECT_EQ(event.sequence, 7u);
  EXPECT_EQ(event.tag, 9u);
  EXPECT_TRUE(heap.empty());
  EXPECT_EQ(heap.next_time(), kNever);
}

TEST(EventHeap, OrdersNegativeAndExtremeTimes) {
  EventHeap heap;
  const Nanos times[] = {kNever, 5, -5, INT64_MIN, 0, kNever, -1};
  uint64_t sequence = 0;
  for (const Nanos when : times) heap.push(ScheduledEvent{when, sequence++, nullptr, 0});
  const std::pair<Nanos, uint64_t> expected[] = {{INT64_MIN, 3}, {-5, 2},     {-1, 6},    {0, 4},
                                                 {5, 1},         {kNever, 0}, {kNever, 5}};
  for (const auto& [when, order] : expected) {
    const ScheduledEvent event = heap.pop();
    EXPECT_EQ(event.when, when);
    EXPECT_EQ(event.sequence, order);
  }
  EXPECT_TRUE(heap.empty());
}

TEST(EventHeap, MatchesAnOrderedModel) {
  // Few distinct times, so most comparisons are decided by the sequence; sizes go up and down
  // through every shape of the last level.
  std::mt19937_64 rng(5);
  EventHeap heap;
  std::map<std::pair<Nanos, uint64_t>, uint64_t> model;
  uint64_t sequence = 0;
  for (int step = 0; step < 100'000; ++step) {
    const bool grow = step % 20'000 < 12'000;
    if (model.empty() || rng() % 100 < (grow ? 60u : 40u)) {
      const auto when = static_cast<Nanos>(rng() % 300);
      heap.push(ScheduledEvent{when, sequence, nullptr, rng()});
      model.emplace(std::make_pair(when, sequence), 0);
      ++sequence;
    } else {
      ASSERT_EQ(heap.next_time(), model.begin()->first.first);
      ASSERT_EQ(heap.next_sequence(), model.begin()->first.second);
      const ScheduledEvent event = heap.pop();
      ASSERT_EQ(event.when, model.begin()->first.first);
      ASSERT_EQ(event.sequence, model.begin()->first.second);
      model.erase(model.begin());
    }
    ASSERT_EQ(heap.size(), model.size());
  }
}

}  // namespace
}  // namespace etwire::clock

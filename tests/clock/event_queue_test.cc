#include "clock/event_queue.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <random>
#include <utility>

#include "clock/timing_wheel.h"

namespace etwire::clock {
namespace {

TEST(EventQueue, ATimerFiledFarAheadStillGoesBeforeLaterEventsAtItsTime) {
  // The first event at `due` is beyond the wheel's span when scheduled, so it waits in the heap;
  // the second is scheduled at the same time once the span reaches it, so it goes to the wheel.
  // Scheduling order must still decide.
  EventQueue queue;
  const Nanos due = 2 * TimingWheel::kSpan;
  queue.push(due, nullptr, 1);
  queue.push(TimingWheel::kSpan + 100, nullptr, 0);
  EXPECT_EQ(queue.pop().tag, 0u);
  queue.push(due, nullptr, 2);
  queue.push(due - 1, nullptr, 3);
  EXPECT_EQ(queue.next_time(), due - 1);
  EXPECT_EQ(queue.pop().tag, 3u);
  EXPECT_EQ(queue.pop().tag, 1u);
  EXPECT_EQ(queue.pop().tag, 2u);
  EXPECT_TRUE(queue.empty());
}

TEST(EventQueue, EventsAskedForInThePastComeFirstInTheirOrder) {
  // The wall clock does not clamp: an event for an earlier time than the last one run is due at
  // once, ahead of later ones.
  EventQueue queue;
  queue.push(1'000, nullptr, 0);
  queue.push(1'500, nullptr, 3);
  EXPECT_EQ(queue.pop().tag, 0u);
  queue.push(10, nullptr, 2);
  queue.push(5, nullptr, 1);
  queue.push(1'000, nullptr, 4);  // at the last time run: after the past ones, before 1'500
  EXPECT_EQ(queue.next_time(), 5);
  EXPECT_EQ(queue.pop().tag, 1u);
  EXPECT_EQ(queue.pop().tag, 2u);
  EXPECT_EQ(queue.pop().tag, 4u);
  EXPECT_EQ(queue.pop().tag, 3u);
  EXPECT_TRUE(queue.empty());
  EXPECT_EQ(queue.next_time(), kNever);
}

TEST(EventQueue, AnEventFromThePastDoesNotPullTheWheelBack) {
  // An event near the far edge of the wheel's span, then one in the past. Were the window moved
  // back to the past event, a later event for just after it would share a slot with the far one.
  EventQueue queue;
  queue.push(1'000, nullptr, 0);
  EXPECT_EQ(queue.pop().tag, 0u);
  const Nanos far_edge = 1'000 + TimingWheel::kSpan - 96;
  queue.push(far_edge, nullptr, 3);
  queue.push(900, nullptr, 1);
  EXPECT_EQ(queue.pop().tag, 1u);
  queue.push(far_edge - TimingWheel::kSpan, nullptr, 2);  // in the past too, same slot
  EXPECT_EQ(queue.pop().when, far_edge - TimingWheel::kSpan);
  const ScheduledEvent last = queue.pop();
  EXPECT_EQ(last.tag, 3u);
  EXPECT_EQ(last.when, far_edge);
  EXPECT_TRUE(queue.empty());
}

TEST(EventQueue, MatchesAnOrderedModelAcrossNearFarAndPastEvents) {
  // Like a data plane: mostly events a few hundred nanoseconds after the last one run, some
  // microseconds out (past the wheel's span), timers milliseconds out, and now and then one in
  // the past. Times are coarse so that ties within and across the two stores are common.
  std::mt19937_64 rng(17);
  EventQueue queue;
  std::map<std::pair<Nanos, uint64_t>, uint64_t> model;
  uint64_t sequence = 0;
  Nanos now = 0;
  for (int step = 0; step < 300'000; ++step) {
    if (model.empty() || rng() % 2 == 0) {
      const uint64_t kind = rng() % 100;
      Nanos when = now;
      if (kind < 80) {
        when += static_cast<Nanos>(rng() % 2'000);
      } else if (kind < 92) {
        when += static_cast<Nanos>(rng() % (4 * TimingWheel::kSpan));
      } else if (kind < 98) {
        when += 1'000'000 + static_cast<Nanos>(rng() % 4) * 1'000;
      } else {
        when -= static_cast<Nanos>(rng() % 500);
      }
      when -= when % 8;
      queue.push(when, nullptr, sequence);
      model.emplace(std::make_pair(when, sequence), sequence);
      ++sequence;
    } else {
      ASSERT_EQ(queue.next_time(), model.begin()->first.first);
      const ScheduledEvent event = queue.pop();
      ASSERT_EQ(event.when, model.begin()->first.first);
      ASSERT_EQ(event.tag, model.begin()->second);
      model.erase(model.begin());
      now = std::max(now, event.when);
    }
    ASSERT_EQ(queue.size(), model.size());
  }
}

}  // namespace
}  // namespace etwire::clock

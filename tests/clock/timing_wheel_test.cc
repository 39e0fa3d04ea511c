#include "clock/timing_wheel.h"

#include <gtest/gtest.h>

#include <map>
#include <random>
#include <utility>

namespace etwire::clock {
namespace {

TEST(TimingWheel, FitsOnlyItsWindowFromTheFloor) {
  TimingWheel wheel;
  wheel.advance_to(10'000);
  EXPECT_FALSE(wheel.fits(9'999));
  EXPECT_TRUE(wheel.fits(10'000));
  EXPECT_TRUE(wheel.fits(10'000 + TimingWheel::kSpan - 1));
  EXPECT_FALSE(wheel.fits(10'000 + TimingWheel::kSpan));
  EXPECT_FALSE(wheel.fits(kNever));
  EXPECT_FALSE(wheel.fits(INT64_MIN));
}

TEST(TimingWheel, SameTimeInSchedulingOrderAndTheFloorFollowsPops) {
  TimingWheel wheel;
  EXPECT_TRUE(wheel.empty());
  EXPECT_EQ(wheel.next_time(), kNever);
  wheel.push(300, 0, nullptr, 30);
  wheel.push(100, 1, nullptr, 10);
  wheel.push(300, 2, nullptr, 31);
  wheel.push(100, 3, nullptr, 11);
  EXPECT_EQ(wheel.size(), 4u);
  EXPECT_EQ(wheel.next_time(), 100);
  EXPECT_EQ(wheel.next_sequence(), 1u);
  const std::pair<Nanos, uint64_t> expected[] = {{100, 10}, {100, 11}, {300, 30}, {300, 31}};
  for (const auto& [when, tag] : expected) {
    const ScheduledEvent event = wheel.pop();
    EXPECT_EQ(event.when, when);
    EXPECT_EQ(event.tag, tag);
    EXPECT_EQ(wheel.floor(), when);
  }
  EXPECT_TRUE(wheel.empty());
  EXPECT_EQ(wheel.next_time(), kNever);
}

TEST(TimingWheel, WrapsAroundItsSlots) {
  // With the floor just short of a multiple of the span, later times land in lower slots.
  TimingWheel wheel;
  const Nanos floor = 5 * TimingWheel::kSpan - 3;
  wheel.advance_to(floor);
  wheel.push(floor + TimingWheel::kSpan - 1, 0, nullptr, 3);  // the highest time, a low slot
  wheel.push(floor + 5, 1, nullptr, 2);                       // past the wrap
  wheel.push(floor + 1, 2, nullptr, 1);                       // before it
  wheel.push(floor, 3, nullptr, 0);
  for (uint64_t tag = 0; tag < 4; ++tag) {
    ASSERT_FALSE(wheel.empty());
    EXPECT_EQ(wheel.pop().tag, tag);
  }
  EXPECT_TRUE(wheel.empty());
}

TEST(TimingWheel, FindsTheNextEventRoundTheWheelInTheSameWordOfSlots) {
  // The only event left is almost a span ahead: its slot is just below the current one, in the
  // same 64-slot word of the occupancy bitmap, so the search has to go all the way round.
  TimingWheel wheel;
  wheel.push(100, 0, nullptr, 0);
  wheel.push(100 + TimingWheel::kSpan - 10, 1, nullptr, 1);
  EXPECT_EQ(wheel.pop().tag, 0u);
  EXPECT_EQ(wheel.next_time(), 100 + TimingWheel::kSpan - 10);
  EXPECT_EQ(wheel.pop().tag, 1u);
  EXPECT_TRUE(wheel.empty());
}

TEST(TimingWheel, MatchesAnOrderedModelAsTheWindowSlides) {
  // Random pushes anywhere in the window, interleaved with pops that move the floor: the wheel
  // must agree with an ordered map keyed by (time, sequence) at every step, through many turns.
  std::mt19937_64 rng(11);
  TimingWheel wheel;
  std::map<std::pair<Nanos, uint64_t>, uint64_t> model;
  uint64_t sequence = 0;
  for (int step = 0; step < 200'000; ++step) {
    if (model.empty() || rng() % 2 == 0) {
      // Mostly near the floor, sometimes at the far edge of the window.
      const uint64_t reach = rng() % 8 == 0 ? TimingWheel::kSpan : 700;
      const Nanos when = wheel.floor() + static_cast<Nanos>(rng() % reach);
      ASSERT_TRUE(wheel.fits(when));
      wheel.push(when, sequence, nullptr, sequence);
      model.emplace(std::make_pair(when, sequence), sequence);
      ++sequence;
    } else {
      ASSERT_EQ(wheel.next_time(), model.begin()->first.first);
      ASSERT_EQ(wheel.next_sequence(), model.begin()->first.second);
      const ScheduledEvent event = wheel.pop();
      ASSERT_EQ(event.when, model.begin()->first.first);
      ASSERT_EQ(event.sequence, model.begin()->first.second);
      ASSERT_EQ(event.tag, model.begin()->second);
      model.erase(model.begin());
    }
    ASSERT_EQ(wheel.size(), model.size());
  }
  EXPECT_GT(wheel.floor(), 50 * TimingWheel::kSpan);  // it went round many times
}

}  // namespace
}  // namespace etwire::clock

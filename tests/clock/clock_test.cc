#include <gtest/gtest.h>

#include <chrono>
#include <map>
#include <random>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "clock/event_queue.h"
#include "clock/virtual_clock.h"
#include "clock/wall_clock.h"

namespace etwire::clock {
namespace {

// Records (time, tag) of every event it receives; may schedule follow-ups.
class Recorder final : public EventHandler {
 public:
  explicit Recorder(Scheduler* scheduler = nullptr) : scheduler_(scheduler) {}
  void on_event(uint64_t tag, Nanos now) override {
    seen.emplace_back(now, tag);
    if (scheduler_ != nullptr && tag >= 1000 && tag < 1003) {
      scheduler_->run_at(now, this, tag + 1);  // same-time follow-up
    }
  }
  std::vector<std::pair<Nanos, uint64_t>> seen;

 private:
  Scheduler* scheduler_;
};

TEST(EventQueue, PopsEarliestFirstAndTiesInSchedulingOrder) {
  std::mt19937_64 rng(3);
  EventQueue queue;
  std::multimap<std::pair<Nanos, uint64_t>, uint64_t> model;
  for (uint64_t i = 0; i < 5000; ++i) {
    Nanos when = static_cast<Nanos>(rng() % 200);
    queue.push(when, nullptr, i);
    model.emplace(std::make_pair(when, i), i);
    if (rng() % 3 == 0) {
      ASSERT_EQ(queue.pop().tag, model.begin()->second);
      model.erase(model.begin());
    }
  }
  while (!queue.empty()) {
    ASSERT_EQ(queue.pop().tag, model.begin()->second);
    model.erase(model.begin());
  }
  EXPECT_TRUE(model.empty());
  EXPECT_EQ(queue.next_time(), kNever);
}

// Logs every hint and every event, in the order they come.
class HintRecorder final : public EventHandler {
 public:
  void on_event(uint64_t tag, Nanos) override { log.push_back("run " + std::to_string(tag)); }
  void prefetch(uint64_t tag) const override { log.push_back("next " + std::to_string(tag)); }
  mutable std::vector<std::string> log;
};

TEST(VirtualClock, TellsTheNextEventsHandlerBeforeRunningTheOneAhead) {
  VirtualClock clock;
  HintRecorder handler;
  clock.run_at(10, &handler, 1);
  clock.run_at(20, &handler, 2);
  clock.run_at(20, &handler, 3);
  clock.run_at(1'000'000'000, &handler, 4);  // beyond the timing wheel: not hinted
  clock.run_until(clock::kNever - 1);
  const std::vector<std::string> expected = {"next 2", "run 1", "next 3",
                                             "run 2",  "run 3", "run 4"};
  EXPECT_EQ(handler.log, expected);
}

TEST(VirtualClock, JumpsFromEventToEvent) {
  VirtualClock clock;
  Recorder r;
  clock.run_at(500, &r, 2);
  clock.run_at(100, &r, 1);
  clock.run_at(500, &r, 3);
  EXPECT_EQ(clock.now(), 0);
  EXPECT_EQ(clock.poll(), 1u);
  EXPECT_EQ(clock.now(), 100);
  EXPECT_EQ(clock.poll(), 2u);  // both events due at 500, in scheduling order
  EXPECT_EQ(clock.now(), 500);
  EXPECT_EQ(r.seen, (std::vector<std::pair<Nanos, uint64_t>>{{100, 1}, {500, 2}, {500, 3}}));
  EXPECT_TRUE(clock.idle());
  EXPECT_EQ(clock.poll(), 0u);
  EXPECT_EQ(clock.events_run(), 3u);
}

TEST(VirtualClock, PastEventsRunNowAndTimeNeverGoesBack) {
  VirtualClock clock(1000);
  Recorder r;
  clock.run_at(10, &r, 7);
  clock.poll();
  EXPECT_EQ(clock.now(), 1000);
  EXPECT_EQ(r.seen.front(), (std::pair<Nanos, uint64_t>{1000, 7}));
}

TEST(VirtualClock, SameTimeFollowUpsRunInTheSamePoll) {
  VirtualClock clock;
  Recorder r(&clock);
  clock.run_at(50, &r, 1000);
  EXPECT_EQ(clock.poll(), 4u);  // 1000 schedules 1001, 1002, 1003 at the same time
  EXPECT_EQ(r.seen.back(), (std::pair<Nanos, uint64_t>{50, 1003}));
}

TEST(VirtualClock, RunUntilStopsAtTheLimit) {
  VirtualClock clock;
  Recorder r;
  for (Nanos t : {10, 20, 30, 40}) clock.run_at(t, &r, static_cast<uint64_t>(t));
  EXPECT_EQ(clock.run_until(25), 2u);
  EXPECT_EQ(clock.now(), 20);
  EXPECT_EQ(clock.next_event_time(), 30);
  EXPECT_EQ(clock.run_until(kNever), 2u);
  EXPECT_EQ(clock.now(), 40);
}

TEST(VirtualClock, SameScheduleGivesTheSameOrder) {
  auto run = [] {
    VirtualClock clock;
    Recorder r;
    std::mt19937_64 rng(11);
    for (uint64_t i = 0; i < 1000; ++i) clock.run_at(static_cast<Nanos>(rng() % 50), &r, i);
    clock.run_until(kNever);
    return r.seen;
  };
  EXPECT_EQ(run(), run());
}

TEST(WallClock, RunsOnlyWhatIsDue) {
  WallClock clock(2 * kNanosPerMilli);
  Recorder r;
  Nanos start = clock.now();
  clock.run_at(start, &r, 1);
  clock.run_at(start + 3600 * kNanosPerSecond, &r, 2);  // an hour from now
  EXPECT_EQ(clock.poll(), 1u);
  ASSERT_EQ(r.seen.size(), 1u);
  EXPECT_EQ(r.seen[0].second, 1u);
  EXPECT_FALSE(clock.idle());
}

TEST(WallClock, FollowsRealTime) {
  WallClock clock(2 * kNanosPerMilli);
  Nanos before = clock.now();
  auto wall_before = std::chrono::steady_clock::now();
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  Nanos elapsed = clock.now() - before;
  auto wall = std::chrono::duration_cast<std::chrono::nanoseconds>(
                  std::chrono::steady_clock::now() - wall_before)
                  .count();
  // Calibration error only: the two clocks agree within 10% over the interval.
  EXPECT_GT(elapsed, wall * 9 / 10);
  EXPECT_LT(elapsed, wall * 11 / 10);
}

TEST(WallClock, RestartCountsFromThen) {
  WallClock clock(2 * kNanosPerMilli);
  std::this_thread::sleep_for(std::chrono::milliseconds(30));
  ASSERT_GE(clock.now(), 30 * kNanosPerMilli);
  clock.restart();
  // Well under the 30 ms that passed before, however loaded the machine is.
  EXPECT_LT(clock.now(), 25 * kNanosPerMilli);
  Recorder r;
  clock.run_at(clock.now() + kNanosPerSecond, &r, 1);
  EXPECT_THROW(clock.restart(), std::logic_error);
}

TEST(WallClock, SharedTimeReadsTheSameOnBothClocks) {
  WallClock reference(2 * kNanosPerMilli);
  std::this_thread::sleep_for(std::chrono::milliseconds(30));
  WallClock follower(0);
  // The follower started 30 ms later: its own time is far behind the reference's.
  EXPECT_LT(follower.now() + 25 * kNanosPerMilli, reference.now());
  follower.share_time_with(reference);
  const Nanos before = reference.now();
  const Nanos shared = follower.now();
  const Nanos after = reference.now();
  EXPECT_GE(shared, before);
  EXPECT_LE(shared, after);
  Recorder r;
  follower.run_at(follower.now() + kNanosPerSecond, &r, 1);
  EXPECT_THROW(follower.share_time_with(reference), std::logic_error);
}

TEST(WallClock, PollRunsABoundedNumberOfEvents) {
  WallClock clock(2 * kNanosPerMilli);
  Recorder r;
  // More events due now than one poll runs: the rest wait for the next poll.
  for (uint64_t i = 0; i < WallClock::kPollBudget + 10; ++i) clock.run_at(0, &r, i);
  EXPECT_EQ(clock.poll(), WallClock::kPollBudget);
  EXPECT_EQ(clock.poll(), 10u);
  EXPECT_TRUE(clock.idle());
}

TEST(WallClock, LastReadIsTakenAfterTheEventsRan) {
  WallClock clock(2 * kNanosPerMilli);
  Recorder r;
  clock.poll();  // nothing pending: still reads the time
  const Nanos idle_read = clock.last_read();
  EXPECT_GT(idle_read, 0);
  EXPECT_LE(idle_read, clock.now());
  for (uint64_t i = 0; i < 20; ++i) clock.run_at(0, &r, i);
  const Nanos before = clock.now();
  EXPECT_EQ(clock.poll(), 20u);
  ASSERT_EQ(r.seen.size(), 20u);
  // Not older than any time a handler was given, nor than the poll's start.
  EXPECT_GE(clock.last_read(), r.seen.back().first);
  EXPECT_GE(clock.last_read(), before);
  EXPECT_LE(clock.last_read(), clock.now());
}

}  // namespace
}  // namespace etwire::clock

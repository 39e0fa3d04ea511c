// The twin's small parts on their own: the ring FIFO, the PRNG, the RED marker and the
// time-weighted queue depth.
#include <gtest/gtest.h>

#include <algorithm>

#include <deque>
#include <random>

#include "common/ring_queue.h"
#include "twin/prng.h"
#include "twin/switch/queue_depth.h"
#include "twin/switch/red_marker.h"

namespace etwire::twin {
namespace {

TEST(RingQueue, IsAFifoAcrossWrapAndGrowth) {
  RingQueue<int> ring;
  std::deque<int> model;
  std::mt19937 rng(5);
  int next = 0;
  for (int step = 0; step < 100000; ++step) {
    if (model.empty() || rng() % 100 < 55) {
      ring.push_back(next);
      model.push_back(next++);
    } else {
      ASSERT_EQ(ring.front(), model.front());
      ring.pop_front();
      model.pop_front();
    }
    ASSERT_EQ(ring.size(), model.size());
  }
  while (!model.empty()) {
    ASSERT_EQ(ring.front(), model.front());
    ring.pop_front();
    model.pop_front();
  }
  EXPECT_TRUE(ring.empty());
}

TEST(RingQueue, StopsGrowingOnceWarm) {
  RingQueue<int> ring;
  for (int i = 0; i < 100; ++i) ring.push_back(i);
  for (int i = 0; i < 100; ++i) ring.pop_front();
  const size_t capacity = ring.capacity();
  EXPECT_EQ(capacity, 128u);
  for (int round = 0; round < 1000; ++round) {
    for (int i = 0; i < 100; ++i) ring.push_back(i);
    for (int i = 0; i < 100; ++i) ring.pop_front();
  }
  EXPECT_EQ(ring.capacity(), capacity);
}

TEST(SplitMix64, IsReproducibleAndStreamsDiffer) {
  SplitMix64 a = SplitMix64::for_stream(42, 1);
  SplitMix64 b = SplitMix64::for_stream(42, 1);
  SplitMix64 c = SplitMix64::for_stream(42, 2);
  SplitMix64 d = SplitMix64::for_stream(43, 1);
  int same_c = 0;
  int same_d = 0;
  for (int i = 0; i < 1000; ++i) {
    const uint64_t x = a.next();
    ASSERT_EQ(x, b.next());
    same_c += x == c.next();
    same_d += x == d.next();
  }
  EXPECT_EQ(same_c, 0);
  EXPECT_EQ(same_d, 0);
  // The reference value of SplitMix64 seeded with 0: pins the algorithm across platforms.
  EXPECT_EQ(SplitMix64(0).next(), 0xE220A8397B1DCDAFull);
}

TEST(SplitMix64, ChanceHonoursItsBoundsAndMean) {
  SplitMix64 rng(9);
  int hits = 0;
  for (int i = 0; i < 100000; ++i) {
    ASSERT_FALSE(rng.chance(0));
    ASSERT_TRUE(rng.chance(1));
    const double u = rng.next_unit();
    ASSERT_GE(u, 0.0);
    ASSERT_LT(u, 1.0);
    hits += rng.chance(0.25);
  }
  EXPECT_NEAR(hits / 100000.0, 0.25, 0.01);
}

config::EcnMarking ecn(uint64_t kmin, uint64_t kmax, double pmax) {
  config::EcnMarking config;
  config.enabled = true;
  config.kmin_bytes = kmin;
  config.kmax_bytes = kmax;
  config.pmax = pmax;
  return config;
}

TEST(RedMarker, ProbabilityIsZeroBelowKminLinearToPmaxAndOneAboveKmax) {
  const RedMarker red(ecn(100'000, 500'000, 0.2));
  EXPECT_EQ(red.probability(0), 0);
  EXPECT_EQ(red.probability(99'999), 0);
  EXPECT_EQ(red.probability(100'000), 0);
  EXPECT_DOUBLE_EQ(red.probability(200'000), 0.05);
  EXPECT_DOUBLE_EQ(red.probability(300'000), 0.1);
  EXPECT_DOUBLE_EQ(red.probability(500'000), 0.2);
  EXPECT_EQ(red.probability(500'001), 1);
  EXPECT_EQ(RedMarker().probability(1'000'000), 0);  // disabled
  config::EcnMarking off = ecn(0, 1, 1);
  off.enabled = false;
  EXPECT_EQ(RedMarker(off).probability(10), 0);
}

TEST(RedMarker, MarksAtTheRampProbability) {
  const RedMarker red(ecn(100'000, 500'000, 0.2));
  SplitMix64 rng(3);
  constexpr int kDraws = 200'000;
  int below = 0;
  int middle = 0;
  int above = 0;
  for (int i = 0; i < kDraws; ++i) {
    below += red.should_mark(50'000, rng);
    middle += red.should_mark(300'000, rng);
    above += red.should_mark(600'000, rng);
  }
  EXPECT_EQ(below, 0);
  EXPECT_NEAR(static_cast<double>(middle) / kDraws, 0.1, 0.005);
  EXPECT_EQ(above, kDraws);
}

TEST(RedMarker, AveragesTheDepthJoiningPacketsFindAndDecaysItWhileIdle) {
  config::EcnMarking config = ecn(100, 200, 1);
  EXPECT_EQ(RedMarker(config).averages(), false);
  RedMarker::Average untouched;
  EXPECT_EQ(RedMarker(config).judged_depth(untouched, 1234, 1000, 0), 1234u);  // weight 1
  config.average_weight = 0.5;
  config.mark_at = config::EcnMarkPoint::kEnqueue;
  const RedMarker red(config, 8'000'000'000);  // 1 byte a ns: a 1000 B packet each 1000 ns
  ASSERT_TRUE(red.averages());
  RedMarker::Average average;
  EXPECT_EQ(red.judged_depth(average, 1000, 1000, 0), 500u);
  EXPECT_EQ(red.judged_depth(average, 1000, 1000, 10), 750u);
  EXPECT_EQ(red.judged_depth(average, 0, 1000, 20), 375u);
  // Empty from t = 100 to 2100: two 1000 B packets could have passed, each halving it.
  average.idle_since = 100;
  EXPECT_EQ(red.judged_depth(average, 0, 1000, 2100), 46u);  // 375 / 4 / 2
  EXPECT_EQ(average.idle_since, clock::kNever);
  // No decay without time passing or before the queue emptied.
  average.bytes = 800;
  average.idle_since = 2200;
  EXPECT_EQ(red.judged_depth(average, 800, 1000, 2200), 800u);
}

// The gaps between marks at a steady depth whose ramp probability is 0.1, over 200,000 packets.
std::vector<int> mark_gaps(config::EcnSpacing spacing) {
  config::EcnMarking config = ecn(0, 1'000'000, 0.2);
  config.spacing = spacing;
  const RedMarker red(config);
  RedMarker::Average state;
  SplitMix64 rng(7);
  std::vector<int> gaps;
  int gap = 0;
  for (int i = 0; i < 200'000; ++i) {
    ++gap;
    if (red.decide(state, 500'000, rng)) {
      gaps.push_back(gap);
      gap = 0;
    }
  }
  return gaps;
}

// Every gap lies in first .. last, and each of the ten from `first` has a tenth of them.
void expect_ten_even_gaps(const std::vector<int>& gaps, int first, int last) {
  std::vector<int> by_gap(static_cast<size_t>(last) + 1, 0);
  for (int gap : gaps) {
    ASSERT_GE(gap, first);
    ASSERT_LE(gap, last);
    ++by_gap[static_cast<size_t>(gap)];
  }
  for (int gap = first; gap < first + 10; ++gap) {
    EXPECT_NEAR(
        static_cast<double>(by_gap[static_cast<size_t>(gap)]) / static_cast<double>(gaps.size()),
        0.1, 0.01)
        << gap;
  }
}

TEST(RedMarker, SpreadMarksComeEvenlyFromOneToOneOverPPacketsApart) {
  // Without spreading, gaps are geometric: mean 1/p = 10, and some far longer.
  const std::vector<int> plain = mark_gaps(config::EcnSpacing::kIndependent);
  const double plain_mean = 200'000.0 / static_cast<double>(plain.size());
  EXPECT_NEAR(plain_mean, 10, 0.3);
  EXPECT_GT(*std::max_element(plain.begin(), plain.end()), 50);
  // With spreading, the n-th packet since a mark goes with p / (1 - n p): every gap from 1 to 10
  // alike (mean 5.5), none longer.
  expect_ten_even_gaps(mark_gaps(config::EcnSpacing::kUniform), 1, 10);
  // Below Kmin the count starts over; above Kmax every packet is marked and it restarts at 0.
  config::EcnMarking config = ecn(100, 200, 0.5);
  config.spacing = config::EcnSpacing::kUniform;
  const RedMarker red(config);
  RedMarker::Average state;
  SplitMix64 rng(1);
  state.since_mark = 5;
  EXPECT_FALSE(red.decide(state, 50, rng));
  EXPECT_EQ(state.since_mark, 0u);
  state.since_mark = 5;
  EXPECT_TRUE(red.decide(state, 300, rng));
  EXPECT_EQ(state.since_mark, 0u);
  // At p = 0.25, a packet after three unmarked ones is marked for sure.
  state.since_mark = 3;
  EXPECT_TRUE(red.decide(state, 150, rng));
}

TEST(RedMarker, WaitSpacingMarksOnlyOnceOneOverPPacketsHavePassed) {
  // ns-3's default: with c = (n + 1) p, never while c < 1, then p / (2 - c), surely at c = 2. At
  // p = 0.1 every gap lies in 10 .. 20 packets (gap g is drawn at c = g p), spread evenly: each
  // of the ten gaps 10 .. 19 with 10 %; mean 14.5, against 5.5 uniform and 10 independent.
  const std::vector<int> gaps = mark_gaps(config::EcnSpacing::kWait);
  expect_ten_even_gaps(gaps, 10, 20);
  EXPECT_NEAR(200'000.0 / static_cast<double>(gaps.size()), 14.5, 0.2);
  // Above Kmax every packet is marked and the count goes on, so the first packet back in the
  // ramp after a long forced stretch is marked for sure; below Kmin it starts over.
  config::EcnMarking config = ecn(100, 200, 0.5);
  config.spacing = config::EcnSpacing::kWait;
  const RedMarker red(config);
  RedMarker::Average state;
  SplitMix64 rng(1);
  for (int i = 0; i < 8; ++i) EXPECT_TRUE(red.decide(state, 300, rng));
  EXPECT_EQ(state.since_mark, 8u);
  EXPECT_TRUE(red.decide(state, 150, rng));  // p 0.25, c = 9 x 0.25 >= 2
  EXPECT_EQ(state.since_mark, 0u);
  EXPECT_FALSE(red.decide(state, 150, rng));  // c = 0.25: never
  EXPECT_FALSE(red.decide(state, 50, rng));
  EXPECT_EQ(state.since_mark, 0u);
}

TEST(RedMarker, GentleRegionRisesFromPmaxToOneAtTwiceKmax) {
  config::EcnMarking config = ecn(100'000, 500'000, 0.2);
  config.gentle = true;
  const RedMarker red(config);
  EXPECT_DOUBLE_EQ(red.probability(300'000), 0.1);  // the ramp is as without
  EXPECT_DOUBLE_EQ(red.probability(500'000), 0.2);
  EXPECT_DOUBLE_EQ(red.probability(750'000), 0.6);  // halfway: 0.2 + 0.8 / 2
  EXPECT_DOUBLE_EQ(red.probability(1'000'000), 1);
  EXPECT_EQ(red.probability(1'000'001), 1);
  SplitMix64 rng(5);
  constexpr int kDraws = 100'000;
  int gentle = 0;
  int forced = 0;
  for (int i = 0; i < kDraws; ++i) {
    gentle += red.should_mark(750'000, rng);
    forced += red.should_mark(1'000'001, rng);
  }
  EXPECT_NEAR(static_cast<double>(gentle) / kDraws, 0.6, 0.01);
  EXPECT_EQ(forced, kDraws);
}

TEST(QueueDepth, IntegratesDepthOverTime) {
  QueueDepth depth(1000);
  depth.add(500, 1000);     // 500 B for 100 ns
  depth.add(300, 1100);     // 800 B for 200 ns
  depth.remove(500, 1300);  // 300 B for 100 ns
  depth.remove(300, 1400);  // empty for 600 ns
  EXPECT_EQ(depth.bytes(), 0u);
  EXPECT_EQ(depth.packets(), 0u);
  EXPECT_EQ(depth.max_bytes(), 800u);
  // (500 x 100 + 800 x 200 + 300 x 100) / 1000 = 240.
  EXPECT_DOUBLE_EQ(depth.average_bytes(2000), 240.0);
  EXPECT_DOUBLE_EQ(depth.average_bytes(1400), 600.0);  // 240'000 / 400
}

}  // namespace
}  // namespace etwire::twin

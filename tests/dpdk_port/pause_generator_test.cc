// When PFC generation pauses and resumes the link partner: thresholds, hysteresis, refresh and
// what happens when a frame could not be queued. Pure logic, no DPDK.
#include "nic/dpdk/pause_generator.h"

#include <gtest/gtest.h>

#include <stdexcept>

namespace etwire::nic::dpdk {
namespace {

constexpr clock::Nanos kPause = 1000;  // refreshed after 500

PauseGenerator make_generator() {
  return PauseGenerator(PauseThresholds{64, 16, kPause});
}

TEST(PauseGenerator, PausesOnlyOnceTheBacklogReachesXoff) {
  PauseGenerator g = make_generator();
  for (uint32_t occupancy : {0u, 16u, 17u, 40u, 63u}) {
    EXPECT_EQ(g.sample(occupancy, 0), PauseAction::kNone) << occupancy;
    EXPECT_FALSE(g.paused());
  }
  EXPECT_EQ(g.sample(64, 10), PauseAction::kPause);
  EXPECT_TRUE(g.paused());
}

TEST(PauseGenerator, StaysPausedAboveXonAndResumesAtXon) {
  PauseGenerator g = make_generator();
  ASSERT_EQ(g.sample(100, 0), PauseAction::kPause);
  // Below XOFF is not enough: the backlog must drain to XON.
  for (uint32_t occupancy : {63u, 40u, 17u}) {
    EXPECT_EQ(g.sample(occupancy, 10), PauseAction::kNone) << occupancy;
    EXPECT_TRUE(g.paused());
  }
  EXPECT_EQ(g.sample(16, 20), PauseAction::kResume);
  EXPECT_FALSE(g.paused());
  // Between the thresholds after a resume: no new pause until XOFF again.
  EXPECT_EQ(g.sample(63, 30), PauseAction::kNone);
  EXPECT_EQ(g.sample(64, 40), PauseAction::kPause);
}

TEST(PauseGenerator, ResumesAtOnceWhenTheQueueEmpties) {
  PauseGenerator g = make_generator();
  ASSERT_EQ(g.sample(64, 0), PauseAction::kPause);
  EXPECT_EQ(g.sample(0, 1), PauseAction::kResume);
  EXPECT_EQ(g.sample(0, 2), PauseAction::kNone);
}

TEST(PauseGenerator, RefreshesAfterHalfThePauseWhileAboveXon) {
  PauseGenerator g = make_generator();
  EXPECT_EQ(g.refresh_interval(), kPause / 2);
  ASSERT_EQ(g.sample(80, 1000), PauseAction::kPause);
  EXPECT_EQ(g.sample(80, 1499), PauseAction::kNone);
  EXPECT_EQ(g.sample(30, 1500), PauseAction::kPause);  // above XON, below XOFF: still refreshed
  EXPECT_EQ(g.sample(30, 1999), PauseAction::kNone);
  // A late sample refreshes once, and the next refresh counts from it.
  EXPECT_EQ(g.sample(30, 2700), PauseAction::kPause);
  EXPECT_EQ(g.sample(30, 3199), PauseAction::kNone);
  EXPECT_EQ(g.sample(30, 3200), PauseAction::kPause);
  EXPECT_EQ(g.sample(16, 3201), PauseAction::kResume);
}

TEST(PauseGenerator, AsksAgainForAFrameThatCouldNotBeQueued) {
  PauseGenerator g = make_generator();
  ASSERT_EQ(g.sample(64, 0), PauseAction::kPause);
  g.not_sent(PauseAction::kPause);
  EXPECT_EQ(g.sample(40, 1), PauseAction::kPause);  // long before the refresh time
  EXPECT_EQ(g.sample(40, 2), PauseAction::kNone);

  ASSERT_EQ(g.sample(10, 3), PauseAction::kResume);
  g.not_sent(PauseAction::kResume);
  EXPECT_TRUE(g.paused());
  EXPECT_EQ(g.sample(10, 4), PauseAction::kResume);
  EXPECT_FALSE(g.paused());
}

TEST(PauseGenerator, RefusesThresholdsOutOfOrderAndPausesOfNoTime) {
  EXPECT_THROW(PauseGenerator(PauseThresholds{16, 16, kPause}), std::invalid_argument);
  EXPECT_THROW(PauseGenerator(PauseThresholds{16, 20, kPause}), std::invalid_argument);
  EXPECT_THROW(PauseGenerator(PauseThresholds{64, 16, 0}), std::invalid_argument);
  EXPECT_NO_THROW(PauseGenerator(PauseThresholds{1, 0, 1}));
}

}  // namespace
}  // namespace etwire::nic::dpdk

// Fitting the device's queue from the frames that crossed it (runner/device_fit.h): the rate it
// drains at from frames back to back behind a queue, the least delay from the delays' low
// percentile, the queue's size where frames were lost, and a profile's overrides by group.
#include <gtest/gtest.h>

#include <vector>

#include "runner/device_fit.h"

namespace etwire::runner {
namespace {

constexpr uint32_t kFrame = 1000;          // bytes on the wire
constexpr uint64_t kRate = 8'000'000'000;  // 8 Gb/s: a frame in 1 us
constexpr clock::Nanos kFrameTime = 1'000;
constexpr clock::Nanos kBase = 5'000;  // the least delay

// Bursts of `burst` frames sent at once every `period`, through a queue that drains at `rate`:
// the k-th frame of a burst waits behind the k before it.
CrossingsTo bursts(int count, int burst, clock::Nanos period, uint64_t rate) {
  CrossingsTo run;
  const clock::Nanos frame = static_cast<clock::Nanos>(kFrame * 8'000'000'000ull / rate);
  for (int b = 0; b < count; ++b) {
    for (int k = 0; k < burst; ++k) {
      const clock::Nanos sent = b * period;
      run.crossings.push_back({sent, sent + kBase + k * frame, kFrame, 1, k >= 6});
      ++run.data_sent;
      ++run.data_arrived;
    }
  }
  return run;
}

DeviceFitInput input_of(const std::vector<CrossingsTo>& runs) {
  DeviceFitInput input;
  input.runs = runs;
  input.configured_rate_bps = kRate;
  input.port_speeds_bps = {kRate, 2 * kRate};
  input.switch_latency_ns = 500;
  input.single_switch = true;
  return input;
}

TEST(DeviceFit, TheRateIsReadFromFramesBackToBackBehindAQueue) {
  // The device drains at 6.4 Gb/s, not the configured 8.
  const std::vector<CrossingsTo> runs{bursts(100, 10, 100'000, 6'400'000'000)};
  const DeviceFit fit = fit_device(input_of(runs));
  EXPECT_EQ(fit.frame_bytes, kFrame);
  EXPECT_TRUE(fit.rate_measured);
  EXPECT_NEAR(static_cast<double>(fit.rate_bps), 6.4e9, 0.01e9);
  EXPECT_EQ(fit.least_delay, kBase);
  // Sender at 16 Gb/s (0.5 us), the queue's frame (1.25 us), the switch (0.5 us): two cables of
  // the rest.
  ASSERT_TRUE(fit.propagation_ns.has_value());
  EXPECT_EQ(*fit.propagation_ns, (kBase - 500 - 1'250 - 500) / 2);
  const ProfileGroups groups = profile_groups(fit, 0, kRate);
  ASSERT_EQ(groups.rate.size(), 1u);
  EXPECT_EQ(groups.rate[0].rfind("ports[0].speed=64", 0), 0u) << groups.rate[0];
}

TEST(DeviceFit, AQueueThatNeverStaysBusyLeavesTheConfiguredRate) {
  const std::vector<CrossingsTo> runs{bursts(50, 1, 100'000, kRate)};
  const DeviceFit fit = fit_device(input_of(runs));
  EXPECT_FALSE(fit.rate_measured);
  EXPECT_EQ(fit.rate_bps, kRate);
  EXPECT_TRUE(profile_groups(fit, 0, kRate).rate.empty());
  EXPECT_FALSE(fit.marking.has_value());  // nothing came out marked
}

TEST(DeviceFit, MarksAndLossesGiveTheCurveAndTheQueueSize) {
  std::vector<CrossingsTo> runs{bursts(200, 12, 100'000, kRate)};
  runs[0].data_sent += 30;  // 30 frames never arrived
  runs[0].unmatched = 4;
  const DeviceFit fit = fit_device(input_of(runs));
  EXPECT_EQ(fit.lost, 30u);
  EXPECT_EQ(fit.unmatched, 4u);
  EXPECT_EQ(fit.most_frames_ahead, 11u);
  ASSERT_TRUE(fit.queue_packets.has_value());
  EXPECT_EQ(*fit.queue_packets, 12u);
  // Frames behind 6 or more were marked, every one: a step at 6 frames.
  ASSERT_TRUE(fit.marking.has_value());
  EXPECT_EQ(fit.marking->weight, 1);
  EXPECT_LE(fit.marking->kmax, 7u);
  EXPECT_GE(fit.marking->kmax, 6u);
  const ProfileGroups groups = profile_groups(fit, 0, kRate);
  EXPECT_EQ(groups.buffer, std::vector<std::string>{"fabric.buffer.queue_packets=12"});
  EXPECT_FALSE(groups.marking.empty());
}

TEST(DeviceFit, OneResendPairedWithALaterCopyDoesNotSetTheLeastDelay) {
  std::vector<CrossingsTo> runs{bursts(200, 10, 100'000, kRate)};
  runs[0].crossings[5].sent = runs[0].crossings[5].arrived - 10;  // 10 ns: impossible
  EXPECT_EQ(fit_device(input_of(runs)).least_delay, kBase);
}

TEST(DeviceFit, NoCrossingsIsRefused) {
  const std::vector<CrossingsTo> runs{CrossingsTo{}};
  EXPECT_THROW(fit_device(input_of(runs)), std::invalid_argument);
}

}  // namespace
}  // namespace etwire::runner

// The clock-offset estimate from round trips: the shortest round trip wins, its midpoint is the
// estimate, half of it the error bound.
#include "cluster/clock_offset.h"

#include <gtest/gtest.h>

#include <stdexcept>
#include <vector>

namespace etwire::cluster {
namespace {

TEST(ClockOffset, TheShortestRoundTripGivesTheEstimateAndItsBound) {
  // The remote clock is 1000 ns ahead. Long round trips read it late in their window.
  const std::vector<RoundTrip> samples = {
      {0, 1900, 1000},     // round trip 1000, remote read at local 900: midpoint says +1400
      {5000, 6100, 5200},  // round trip 200, read at local 5100: midpoint says +1000
      {9000, 10050, 9300},
  };
  const ClockOffset offset = estimate_offset(samples);
  EXPECT_EQ(offset.offset_ns, 1000);
  EXPECT_EQ(offset.round_trip_ns, 200);
  EXPECT_EQ(offset.error_ns, 100);
  EXPECT_EQ(offset.samples, 3u);
}

TEST(ClockOffset, ARemoteClockBehindGivesANegativeOffset) {
  const std::vector<RoundTrip> samples = {{1'000'000, 400'050, 1'000'100}};
  EXPECT_EQ(estimate_offset(samples).offset_ns, -600'000);  // read at local 1'000'050
}

TEST(ClockOffset, ImpossibleSamplesAreIgnoredAndNoneIsAnError) {
  const std::vector<RoundTrip> backwards = {{100, 50, 90}};
  EXPECT_THROW(estimate_offset(backwards), std::invalid_argument);
  const std::vector<RoundTrip> mixed = {{100, 50, 90}, {200, 260, 220}};
  const ClockOffset offset = estimate_offset(mixed);
  EXPECT_EQ(offset.samples, 1u);
  EXPECT_EQ(offset.offset_ns, 50);
}

}  // namespace
}  // namespace etwire::cluster

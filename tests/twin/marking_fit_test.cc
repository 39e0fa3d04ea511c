// Fitting a queue's marking curve to marks seen at known queue depths (twin/replay/marking_fit.h):
// marks drawn from a known RED curve give that curve back; marks made on an averaged queue are
// told from marks made on the queue itself.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "twin/prng.h"
#include "twin/replay/marking_fit.h"

namespace etwire::twin {
namespace {

std::vector<QueueSeen> draw(uint32_t kmin, uint32_t kmax, double pmax, double weight, size_t count,
                            uint64_t seed) {
  SplitMix64 rng(seed);
  std::vector<QueueSeen> samples;
  double average = 0;
  double queue = 0;
  for (size_t i = 0; i < count; ++i) {
    // A queue that wanders between empty and 45 frames, a frame at a time.
    queue = std::clamp(queue + (rng.chance(0.5) ? -1.0 : 1.0), 0.0, 45.0);
    average = (1 - weight) * average + weight * queue;
    const bool marked = rng.chance(marking_probability(average, kmin, kmax, pmax));
    samples.push_back({queue, marked});
  }
  return samples;
}

TEST(MarkingFit, MarksFromAKnownCurveGiveItBack) {
  const std::vector<QueueSeen> samples = draw(10, 30, 0.1, 1, 200'000, 7);
  const std::vector<double> weights{1, 0.1, 0.01};
  const MarkingFit fit = fit_marking(samples, weights, 46);
  EXPECT_EQ(fit.weight, 1);
  EXPECT_NEAR(fit.kmin, 10, 1);
  EXPECT_NEAR(fit.kmax, 30, 1);
  EXPECT_NEAR(fit.pmax, 0.1, 0.05);
  EXPECT_EQ(fit.samples, samples.size());
  EXPECT_NEAR(fit.expected_marks, static_cast<double>(fit.marked), 0.05 * fit.marked);
}

TEST(MarkingFit, MarksOnAnAveragedQueueAreToldApart) {
  const std::vector<QueueSeen> samples = draw(8, 20, 0.2, 0.01, 200'000, 11);
  const std::vector<double> weights{1, 0.1, 0.01, 0.001};
  const MarkingFit fit = fit_marking(samples, weights, 46);
  EXPECT_EQ(fit.weight, 0.01);
  EXPECT_NEAR(fit.kmin, 8, 2);
  EXPECT_NEAR(fit.kmax, 20, 2);
}

TEST(MarkingFit, TheProbabilityRisesLinearlyBetweenTheThresholds) {
  EXPECT_EQ(marking_probability(9.9, 10, 30, 0.1), 0);
  EXPECT_DOUBLE_EQ(marking_probability(20, 10, 30, 0.1), 0.05);
  EXPECT_EQ(marking_probability(30, 10, 30, 0.1), 1);
  EXPECT_THROW(fit_marking({}, std::vector<double>{1}, 10), std::invalid_argument);
}

}  // namespace
}  // namespace etwire::twin

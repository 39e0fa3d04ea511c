#include "collectives/alpha_beta_fit.h"

#include <gtest/gtest.h>

#include <stdexcept>
#include <vector>

namespace etwire::collectives {
namespace {

TEST(AlphaBetaFit, RecoversAnExactLine) {
  // 5 us plus 1 byte per 10 ns: beta 100 bytes per us, 0.1 GB/s.
  const std::vector<double> bytes{100, 1000, 10000, 100000};
  std::vector<double> times;
  for (double b : bytes) times.push_back(5 + b / 100);
  const auto fit = fit_alpha_beta(bytes, times);
  ASSERT_TRUE(fit);
  EXPECT_NEAR(fit->alpha_us, 5, 1e-9);
  ASSERT_TRUE(fit->beta_bytes_per_us);
  EXPECT_NEAR(*fit->beta_bytes_per_us, 100, 1e-9);
  EXPECT_NEAR(*fit->beta_gb_per_second(), 0.1, 1e-12);
  EXPECT_EQ(fit->points, 4u);
  EXPECT_NEAR(fit->rms_relative_error, 0, 1e-12);
  EXPECT_NEAR(fit->max_relative_error, 0, 1e-12);
}

// Sizes over five orders of magnitude with 1 % of alternating error: the relative fit keeps the
// latency of the small sizes, where a plain least-squares fit would let the largest sizes'
// residuals (tens of microseconds) decide it.
TEST(AlphaBetaFit, SmallSizesStillDecideAlpha) {
  constexpr double kAlpha = 20;    // us
  constexpr double kBeta = 12000;  // bytes per us: 12 GB/s
  std::vector<double> bytes, times;
  double sign = 1;
  for (double b = 1024; b <= 64.0 * 1024 * 1024; b *= 2) {
    bytes.push_back(b);
    times.push_back((kAlpha + b / kBeta) * (1 + 0.01 * sign));
    sign = -sign;
  }
  const auto fit = fit_alpha_beta(bytes, times);
  ASSERT_TRUE(fit);
  EXPECT_NEAR(fit->alpha_us, kAlpha, 1.0);
  ASSERT_TRUE(fit->beta_gb_per_second());
  EXPECT_NEAR(*fit->beta_gb_per_second(), 12, 0.25);
  EXPECT_GT(fit->rms_relative_error, 0.005);
  EXPECT_LT(fit->max_relative_error, 0.03);
}

TEST(AlphaBetaFit, LeavesOutPointsWithoutATime) {
  const std::vector<double> bytes{100, 200, 300, 400};
  const std::vector<double> times{2, 0, 4, -1};
  const auto fit = fit_alpha_beta(bytes, times);
  ASSERT_TRUE(fit);
  EXPECT_EQ(fit->points, 2u);
  EXPECT_NEAR(fit->alpha_us, 1, 1e-9);
  EXPECT_NEAR(*fit->beta_bytes_per_us, 100, 1e-9);
}

TEST(AlphaBetaFit, NoFitWithoutTwoDistinctSizes) {
  EXPECT_FALSE(fit_alpha_beta(std::vector<double>{}, std::vector<double>{}));
  EXPECT_FALSE(fit_alpha_beta(std::vector<double>{100}, std::vector<double>{3}));
  EXPECT_FALSE(fit_alpha_beta(std::vector<double>{100, 100}, std::vector<double>{3, 4}));
  EXPECT_FALSE(fit_alpha_beta(std::vector<double>{100, 200}, std::vector<double>{3, 0}));
}

TEST(AlphaBetaFit, NoBandwidthWhenTimeDoesNotGrow) {
  const auto fit =
      fit_alpha_beta(std::vector<double>{100, 1000, 10000}, std::vector<double>{8, 8, 8});
  ASSERT_TRUE(fit);
  EXPECT_NEAR(fit->alpha_us, 8, 1e-9);
  EXPECT_FALSE(fit->beta_bytes_per_us);
  EXPECT_FALSE(fit->beta_gb_per_second());
}

TEST(AlphaBetaFit, UnequalSpansAreRefused) {
  EXPECT_THROW(fit_alpha_beta(std::vector<double>{1, 2}, std::vector<double>{1}),
               std::invalid_argument);
}

}  // namespace
}  // namespace etwire::collectives

// Expected values are worked out from the rules in docs/transport.md ("DCQCN reaction point"),
// step by step in each test, not taken from the implementation. Defaults are NVIDIA's:
// alpha_gain g = 5/1024, initial alpha 1023/1024, alpha period 1 us, reduce period 4 us,
// cut = alpha/2 capped at 50 %, increase timer 300 us, byte counter 32767 B, F = 1,
// R_AI 5 Mb/s, R_HAI 50 Mb/s.
#include "transport/dcqcn_reaction_point.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <iostream>
#include <random>
#include <vector>

namespace etwire::transport {
namespace {

using clock::Nanos;

constexpr uint64_t kLineRateBps = 100'000'000'000;
constexpr double kLine = 100e9;
constexpr Nanos kUs = 1'000;
constexpr double kGain = 5.0 / 1024.0;
constexpr double kInitialAlpha = 1023.0 / 1024.0;
// Alpha after the first update, which closes the period of the QP's first CNP.
constexpr double kAlphaAfterFirstPeriod = (1.0 - kGain) * kInitialAlpha + kGain;
// The first cut with the initial alpha: 100 G x (1 - 1023/2048) = 100 G x 1025/2048, exactly.
constexpr double kFirstCutRate = 50'048'828'125.0;

double cut(double rate, double alpha) {
  return rate * (1.0 - std::min(alpha * 0.5, 0.5));
}

// Alpha `quiet` updates after the first one, with no CNP since the first.
double alpha_after_quiet(uint64_t quiet) {
  return kAlphaAfterFirstPeriod * std::pow(1.0 - kGain, static_cast<double>(quiet));
}

struct Fixture {
  explicit Fixture(const config::DcqcnConfig& config_in) : config(config_in) {
    rp.reset(&config, kLineRateBps, 0);
  }
  config::DcqcnConfig config;
  DcqcnReactionPoint rp;
};

TEST(DcqcnReactionPoint, FitsInThePerFlowBudget) {
  std::cout << "sizeof(DcqcnReactionPoint) = " << sizeof(DcqcnReactionPoint) << " bytes\n";
  RecordProperty("sizeof", static_cast<int>(sizeof(DcqcnReactionPoint)));
  EXPECT_LE(sizeof(DcqcnReactionPoint), 120u);
}

TEST(DcqcnReactionPoint, StartsAtLineRateAndStaysThereWithoutCnps) {
  Fixture f{config::DcqcnConfig{}};
  EXPECT_EQ(f.rp.rate_bps(0), kLineRateBps);
  EXPECT_DOUBLE_EQ(f.rp.alpha(), kInitialAlpha);
  f.rp.on_bytes_sent(10'000'000, 5 * kUs);  // no byte counting before a cut
  EXPECT_EQ(f.rp.rate_bps(clock::kNanosPerSecond), kLineRateBps);
  EXPECT_DOUBLE_EQ(f.rp.target_rate_bps(), kLine);
  EXPECT_DOUBLE_EQ(f.rp.alpha(), kInitialAlpha);  // alpha's clock starts with the first CNP
  EXPECT_EQ(f.rp.rate_cuts(), 0u);
}

TEST(DcqcnReactionPoint, FirstCnpCutsWithInitialAlpha) {
  Fixture f{config::DcqcnConfig{}};
  f.rp.on_cnp(10 * kUs);
  EXPECT_EQ(f.rp.cnps_received(), 1u);
  EXPECT_EQ(f.rp.rate_cuts(), 1u);
  EXPECT_DOUBLE_EQ(f.rp.current_rate_bps(), kFirstCutRate);
  EXPECT_EQ(f.rp.rate_bps(10 * kUs), 50'048'828'125u);
  EXPECT_DOUBLE_EQ(f.rp.target_rate_bps(), kLine);  // RT <- RC before the cut: line rate
  EXPECT_DOUBLE_EQ(f.rp.alpha(), kInitialAlpha);    // first update only at 11 us
}

TEST(DcqcnReactionPoint, AlphaRisesInThePeriodOfACnpAndDecaysOverQuietPeriods) {
  Fixture f{config::DcqcnConfig{}};
  f.rp.on_cnp(0);
  f.rp.rate_bps(kUs - 1);
  EXPECT_DOUBLE_EQ(f.rp.alpha(), kInitialAlpha);
  f.rp.rate_bps(kUs);  // the update at 1 us saw the CNP at 0
  EXPECT_DOUBLE_EQ(f.rp.alpha(), kAlphaAfterFirstPeriod);

  // k quiet updates at 2 .. k+1 us: alpha x (1 - g)^k. Checked against plain multiplication too.
  constexpr int kQuiet = 10;
  double multiplied = kAlphaAfterFirstPeriod;
  for (int i = 0; i < kQuiet; ++i) multiplied *= 1.0 - kGain;
  f.rp.rate_bps((kQuiet + 1) * kUs - 1);
  EXPECT_DOUBLE_EQ(f.rp.alpha(), alpha_after_quiet(kQuiet - 1));
  f.rp.rate_bps((kQuiet + 1) * kUs);
  EXPECT_DOUBLE_EQ(f.rp.alpha(), alpha_after_quiet(kQuiet));
  EXPECT_NEAR(f.rp.alpha(), multiplied, 1e-14);

  // Five million quiet periods in one call.
  constexpr uint64_t kLongQuiet = 5'000'000;
  f.rp.rate_bps(static_cast<Nanos>(kLongQuiet + 1) * kUs);
  EXPECT_DOUBLE_EQ(f.rp.alpha(), alpha_after_quiet(kLongQuiet));
  EXPECT_LT(f.rp.alpha(), 1e-300);
}

TEST(DcqcnReactionPoint, TwoCnpsInOneReducePeriodCutNowAndAtThePeriodEnd) {
  Fixture f{config::DcqcnConfig{}};
  f.rp.on_cnp(0);
  EXPECT_EQ(f.rp.rate_cuts(), 1u);
  f.rp.on_cnp(2'500);  // 2.5 us after the cut: pending until 4 us
  EXPECT_EQ(f.rp.rate_cuts(), 1u);
  EXPECT_EQ(f.rp.rate_bps(4 * kUs - 1), 50'048'828'125u);
  EXPECT_EQ(f.rp.rate_cuts(), 1u);

  // Alpha at 4 us: 1 us saw the CNP at 0, 2 us quiet, 3 us saw the CNP at 2.5 us, 4 us quiet
  // (the update at 4 us comes before the cut at 4 us).
  const double alpha_2us = kAlphaAfterFirstPeriod * (1.0 - kGain);
  const double alpha_3us = (1.0 - kGain) * alpha_2us + kGain;
  const double alpha_4us = alpha_3us * (1.0 - kGain);
  f.rp.rate_bps(4 * kUs);
  EXPECT_EQ(f.rp.rate_cuts(), 2u);
  EXPECT_DOUBLE_EQ(f.rp.alpha(), alpha_4us);
  EXPECT_DOUBLE_EQ(f.rp.current_rate_bps(), cut(kFirstCutRate, alpha_4us));
  // No increase between the cuts: the target stays where it was (docs: "Which target rule").
  EXPECT_DOUBLE_EQ(f.rp.target_rate_bps(), kLine);

  // A CNP 1 us after that cut waits for 8 us; one 5 us after the 8 us cut cuts at once.
  f.rp.on_cnp(5 * kUs);
  const uint64_t after_second_cut = f.rp.rate_bps(5 * kUs);
  EXPECT_EQ(f.rp.rate_bps(8 * kUs - 1), after_second_cut);
  EXPECT_EQ(f.rp.rate_cuts(), 2u);
  f.rp.rate_bps(8 * kUs);
  EXPECT_EQ(f.rp.rate_cuts(), 3u);
  f.rp.on_cnp(13 * kUs);
  EXPECT_EQ(f.rp.rate_cuts(), 4u);
  EXPECT_EQ(f.rp.cnps_received(), 4u);
}

TEST(DcqcnReactionPoint, APendingCutDueWithTheIncreaseTimerWins) {
  config::DcqcnConfig config;
  config.rate_reduce_period_ns = 300'000;  // = rate_increase_period_ns
  Fixture f{config};
  f.rp.on_cnp(0);
  f.rp.on_cnp(100 * kUs);  // pending until 300 us, when the increase timer is due too
  // Alpha at 300 us: 1 us saw the CNP at 0, 2 .. 100 us quiet (99), 101 us saw the CNP at
  // 100 us, 102 .. 300 us quiet (199).
  const double alpha_101us = (1.0 - kGain) * alpha_after_quiet(99) + kGain;
  const double alpha_300us = alpha_101us * std::pow(1.0 - kGain, 199.0);
  f.rp.rate_bps(300 * kUs);
  // The cut restarts the timer, so no increase happened: RT untouched, RC cut from the first
  // cut's rate (an increase first would have raised RC and clamped RT to it).
  EXPECT_EQ(f.rp.rate_cuts(), 2u);
  EXPECT_DOUBLE_EQ(f.rp.target_rate_bps(), kLine);
  EXPECT_DOUBLE_EQ(f.rp.current_rate_bps(), cut(kFirstCutRate, alpha_300us));
  f.rp.rate_bps(600 * kUs - 1);  // next increase 300 us after the cut
  EXPECT_DOUBLE_EQ(f.rp.current_rate_bps(), cut(kFirstCutRate, alpha_300us));
  f.rp.rate_bps(600 * kUs);
  EXPECT_DOUBLE_EQ(f.rp.current_rate_bps(), (kLine + cut(kFirstCutRate, alpha_300us)) / 2.0);
}

TEST(DcqcnReactionPoint, ManyCnpsInOnePeriodStillCutOnce) {
  Fixture f{config::DcqcnConfig{}};
  f.rp.on_cnp(0);
  for (Nanos t = 100; t < 4 * kUs; t += 100) f.rp.on_cnp(t);
  EXPECT_EQ(f.rp.rate_cuts(), 1u);
  f.rp.rate_bps(4 * kUs);
  EXPECT_EQ(f.rp.rate_cuts(), 2u);
  EXPECT_EQ(f.rp.cnps_received(), 40u);
}

TEST(DcqcnReactionPoint, ClampTargetRateSetsTheTargetOnEveryCut) {
  config::DcqcnConfig config;
  config.clamp_target_rate = true;
  Fixture f{config};
  f.rp.on_cnp(0);
  f.rp.on_cnp(10 * kUs);  // updates at 2 .. 10 us were quiet: 9
  const double alpha_10us = alpha_after_quiet(9);
  EXPECT_DOUBLE_EQ(f.rp.target_rate_bps(), kFirstCutRate);
  EXPECT_DOUBLE_EQ(f.rp.current_rate_bps(), cut(kFirstCutRate, alpha_10us));
}

TEST(DcqcnReactionPoint, TimerIncreaseBetweenCutsClampsTheTargetByDefault) {
  Fixture f{config::DcqcnConfig{}};
  f.rp.on_cnp(0);
  // Timer at 300 us, fast recovery (T = B = 0 < F = 1): halfway to line rate.
  const double recovered = (kLine + kFirstCutRate) / 2.0;
  f.rp.rate_bps(300 * kUs);
  EXPECT_DOUBLE_EQ(f.rp.current_rate_bps(), recovered);
  f.rp.on_cnp(400 * kUs);  // clamp_target_rate_after_time_increase: RT <- RC
  EXPECT_DOUBLE_EQ(f.rp.target_rate_bps(), recovered);
  EXPECT_DOUBLE_EQ(f.rp.current_rate_bps(), cut(recovered, alpha_after_quiet(399)));
}

TEST(DcqcnReactionPoint, WithoutClampAfterTimeIncreaseOnlyByteIncreasesClampTheTarget) {
  config::DcqcnConfig config;
  config.clamp_target_rate_after_time_increase = false;
  const double recovered = (kLine + kFirstCutRate) / 2.0;
  {
    Fixture f{config};
    f.rp.on_cnp(0);
    f.rp.rate_bps(300 * kUs);  // timer increase
    EXPECT_DOUBLE_EQ(f.rp.current_rate_bps(), recovered);
    f.rp.on_cnp(400 * kUs);
    EXPECT_DOUBLE_EQ(f.rp.target_rate_bps(), kLine);
    EXPECT_DOUBLE_EQ(f.rp.current_rate_bps(), cut(recovered, alpha_after_quiet(399)));
  }
  {
    Fixture f{config};
    f.rp.on_cnp(0);
    f.rp.on_bytes_sent(32'767, 100 * kUs);  // byte-counter increase
    EXPECT_DOUBLE_EQ(f.rp.current_rate_bps(), recovered);
    f.rp.on_cnp(200 * kUs);
    EXPECT_DOUBLE_EQ(f.rp.target_rate_bps(), recovered);
    EXPECT_DOUBLE_EQ(f.rp.current_rate_bps(), cut(recovered, alpha_after_quiet(199)));
  }
}

TEST(DcqcnReactionPoint, FastRecoveryHalvesTheGapToTheTargetPerTimerEvent) {
  config::DcqcnConfig config;
  config.fast_recovery_stages = 3;
  Fixture f{config};
  f.rp.on_cnp(0);
  f.rp.rate_bps(300 * kUs - 1);
  EXPECT_DOUBLE_EQ(f.rp.current_rate_bps(), kFirstCutRate);
  double expected = kFirstCutRate;
  for (int event = 1; event <= 3; ++event) {
    expected = (kLine + expected) / 2.0;
    f.rp.rate_bps(event * 300 * kUs);
    EXPECT_DOUBLE_EQ(f.rp.current_rate_bps(), expected) << "timer event " << event;
    EXPECT_DOUBLE_EQ(f.rp.target_rate_bps(), kLine);
  }
}

TEST(DcqcnReactionPoint, AdditiveThenHyperIncrease) {
  config::DcqcnConfig config;
  config.rate_on_first_cnp_bps = 20'000'000'000;  // RC = RT = 20 G: room for RT to grow
  Fixture f{config};
  f.rp.on_cnp(0);
  EXPECT_DOUBLE_EQ(f.rp.current_rate_bps(), 20e9);
  EXPECT_DOUBLE_EQ(f.rp.target_rate_bps(), 20e9);

  f.rp.rate_bps(300 * kUs);  // timer, T = 0, B = 0: fast recovery, RC = (20 + 20) / 2
  EXPECT_DOUBLE_EQ(f.rp.current_rate_bps(), 20e9);
  EXPECT_DOUBLE_EQ(f.rp.target_rate_bps(), 20e9);

  f.rp.rate_bps(600 * kUs);  // timer, T = 1, B = 0: additive
  EXPECT_DOUBLE_EQ(f.rp.target_rate_bps(), 20.005e9);
  EXPECT_DOUBLE_EQ(f.rp.current_rate_bps(), 20.0025e9);

  f.rp.on_bytes_sent(32'767, 700 * kUs);  // bytes, T = 2, B = 0: additive
  EXPECT_DOUBLE_EQ(f.rp.target_rate_bps(), 20.010e9);
  EXPECT_DOUBLE_EQ(f.rp.current_rate_bps(), 20.00625e9);

  f.rp.on_bytes_sent(32'767, 800 * kUs);  // bytes, T = 2, B = 1: B at F, still additive
  EXPECT_DOUBLE_EQ(f.rp.target_rate_bps(), 20.015e9);
  EXPECT_DOUBLE_EQ(f.rp.current_rate_bps(), 20.010625e9);

  EXPECT_EQ(f.rp.rate_bps(900 * kUs), 20'037'812'500u);  // timer, T = 2, B = 2: hyper
  EXPECT_DOUBLE_EQ(f.rp.target_rate_bps(), 20.065e9);
  EXPECT_DOUBLE_EQ(f.rp.current_rate_bps(), 20.0378125e9);
}

// Spec 3.8: additive while a counter stands at F ("i = F") or only one is past it, hyper only
// when both are past F. Checked at the boundary for F = 1 and F = 2, one event at a time: the
// event's kind shows in how far the target moves (0, R_AI or R_HAI), and the current rate always
// goes halfway to the new target.
TEST(DcqcnReactionPoint, HyperIncreaseNeedsBothCountersPastTheThreshold) {
  enum Event { kTimer, kBytes };
  struct Step {
    Event event;
    double target_step;  // 0 (fast recovery), R_AI or R_HAI
    const char* what;
  };
  constexpr double kAi = 5e6;
  constexpr double kHai = 50e6;
  const auto run = [](uint32_t stages, const std::vector<Step>& steps) {
    config::DcqcnConfig config;
    config.fast_recovery_stages = stages;
    config.rate_on_first_cnp_bps = 20'000'000'000;  // RC = RT = 20 G: room for RT to grow
    config.rate_increase_bytes = 4'096;
    Fixture f{config};
    f.rp.on_cnp(0);
    Nanos timer_at = 0;
    Nanos bytes_at = 0;
    for (const Step& step : steps) {
      const double target_before = f.rp.target_rate_bps();
      const double current_before = f.rp.current_rate_bps();
      if (step.event == kTimer) {
        timer_at += 300 * kUs;
        bytes_at = timer_at;
        f.rp.rate_bps(timer_at);
      } else {
        bytes_at += kUs;  // between timer events: one byte-counter event each
        f.rp.on_bytes_sent(4'096, bytes_at);
      }
      const double target = target_before + step.target_step;
      EXPECT_DOUBLE_EQ(f.rp.target_rate_bps(), target) << "F = " << stages << ", " << step.what;
      EXPECT_DOUBLE_EQ(f.rp.current_rate_bps(), (target + current_before) / 2.0)
          << "F = " << stages << ", " << step.what;
    }
    EXPECT_EQ(f.rp.rate_cuts(), 1u);
  };
  run(1, {{kBytes, 0, "B: T = 0, B = 0: fast recovery"},
          {kTimer, kAi, "T: T = 0, B = 1: additive"},
          {kBytes, kAi, "B: T = 1, B = 1: both at F, additive"},
          {kTimer, kAi, "T: T = 1, B = 2: T at F, additive"},
          {kBytes, kHai, "B: T = 2, B = 2: both past F, hyper"},
          {kTimer, kHai, "T: T = 2, B = 3: hyper"}});
  run(2, {{kBytes, 0, "B: T = 0, B = 0: fast recovery"},
          {kBytes, 0, "B: T = 0, B = 1: fast recovery"},
          {kTimer, kAi, "T: T = 0, B = 2: additive"},
          {kTimer, kAi, "T: T = 1, B = 2: additive"},
          {kBytes, kAi, "B: T = 2, B = 2: both at F, additive"},
          {kBytes, kAi, "B: T = 2, B = 3: T at F, additive"},
          {kTimer, kAi, "T: T = 2, B = 4: T at F, additive"},
          {kBytes, kHai, "B: T = 3, B = 4: both past F, hyper"}});
}

TEST(DcqcnReactionPoint, ByteCounterRaisesEveryRateIncreaseBytes) {
  Fixture f{config::DcqcnConfig{}};
  f.rp.on_cnp(0);
  f.rp.on_bytes_sent(32'766, 1 * kUs);
  EXPECT_DOUBLE_EQ(f.rp.current_rate_bps(), kFirstCutRate);
  f.rp.on_bytes_sent(1, 2 * kUs);  // 32767: B = 0 -> fast recovery
  double expected = (kLine + kFirstCutRate) / 2.0;
  EXPECT_DOUBLE_EQ(f.rp.current_rate_bps(), expected);

  f.rp.on_bytes_sent(2 * 32'767 + 5, 3 * kUs);  // two events (additive, RT capped), 5 B left
  expected = (kLine + expected) / 2.0;
  expected = (kLine + expected) / 2.0;
  EXPECT_DOUBLE_EQ(f.rp.current_rate_bps(), expected);
  EXPECT_DOUBLE_EQ(f.rp.target_rate_bps(), kLine);
  f.rp.on_bytes_sent(32'761, 4 * kUs);
  EXPECT_DOUBLE_EQ(f.rp.current_rate_bps(), expected);
  f.rp.on_bytes_sent(1, 5 * kUs);  // 5 + 32761 + 1 = 32767
  expected = (kLine + expected) / 2.0;
  EXPECT_DOUBLE_EQ(f.rp.current_rate_bps(), expected);
  EXPECT_EQ(f.rp.rate_bps(5 * kUs), 96'878'051'758u);  // 96878051757.8125 rounded

  // A cut restarts the byte counter.
  f.rp.on_bytes_sent(32'000, 6 * kUs);
  f.rp.on_cnp(10 * kUs);
  const double after_cut = f.rp.current_rate_bps();
  f.rp.on_bytes_sent(767, 11 * kUs);
  EXPECT_DOUBLE_EQ(f.rp.current_rate_bps(), after_cut);
}

TEST(DcqcnReactionPoint, CutsStopAtTheMinimumRate) {
  {
    config::DcqcnConfig config;
    config.min_rate_bps = 60'000'000'000;
    Fixture f{config};
    f.rp.on_cnp(0);
    EXPECT_DOUBLE_EQ(f.rp.current_rate_bps(), 60e9);
  }
  {
    config::DcqcnConfig config;
    config.min_rate_bps = 30'000'000'000;
    Fixture f{config};
    f.rp.on_cnp(0);
    EXPECT_DOUBLE_EQ(f.rp.current_rate_bps(), kFirstCutRate);
    f.rp.on_cnp(4 * kUs);  // ~50.05 G x (1 - ~0.49) ~ 25.6 G < 30 G
    EXPECT_DOUBLE_EQ(f.rp.current_rate_bps(), 30e9);
    f.rp.on_cnp(8 * kUs);
    EXPECT_EQ(f.rp.rate_bps(8 * kUs), 30'000'000'000u);
  }
}

TEST(DcqcnReactionPoint, MaxRateCutCapsOneCut) {
  {
    config::DcqcnConfig config;
    config.rate_cut_scale = 1.0;  // alpha x 1 = 1023/1024 > 0.5
    Fixture f{config};
    f.rp.on_cnp(0);
    EXPECT_DOUBLE_EQ(f.rp.current_rate_bps(), 50e9);
  }
  {
    config::DcqcnConfig config;
    config.max_rate_cut = 0.25;  // alpha / 2 = 1023/2048 > 0.25
    Fixture f{config};
    f.rp.on_cnp(0);
    EXPECT_DOUBLE_EQ(f.rp.current_rate_bps(), 75e9);
  }
}

TEST(DcqcnReactionPoint, RateOnFirstCnpSetsCurrentAndTargetThenNormalCuts) {
  config::DcqcnConfig config;
  config.rate_on_first_cnp_bps = 10'000'000'000;
  Fixture f{config};
  f.rp.on_cnp(0);
  EXPECT_EQ(f.rp.rate_bps(0), 10'000'000'000u);
  EXPECT_DOUBLE_EQ(f.rp.target_rate_bps(), 10e9);
  EXPECT_EQ(f.rp.rate_cuts(), 1u);
  EXPECT_DOUBLE_EQ(f.rp.alpha(), kInitialAlpha);
  f.rp.on_cnp(10 * kUs);  // a normal cut, alpha after 9 quiet updates
  EXPECT_DOUBLE_EQ(f.rp.current_rate_bps(), cut(10e9, alpha_after_quiet(9)));
  EXPECT_DOUBLE_EQ(f.rp.target_rate_bps(), 10e9);
}

TEST(DcqcnReactionPoint, DisabledKeepsLineRateAndOnlyCountsCnps) {
  config::DcqcnConfig config;
  config.enabled = false;
  Fixture f{config};
  for (Nanos t = 0; t < 3 * kUs; t += kUs) f.rp.on_cnp(t);
  f.rp.on_bytes_sent(1'000'000, 4 * kUs);
  EXPECT_EQ(f.rp.rate_bps(5 * kUs), kLineRateBps);
  EXPECT_EQ(f.rp.rate_bps(clock::kNanosPerSecond), kLineRateBps);
  EXPECT_EQ(f.rp.cnps_received(), 3u);
  EXPECT_EQ(f.rp.rate_cuts(), 0u);
}

TEST(DcqcnReactionPoint, RatesNeverExceedLineRate) {
  config::DcqcnConfig config;
  config.rate_on_first_cnp_bps = 99'990'000'000;  // 10 Mb/s below line rate
  config.rate_increase_bytes = 1'000;
  Fixture f{config};
  f.rp.on_cnp(0);
  bool reached_line_rate = false;
  for (int packet = 1; packet <= 200; ++packet) {
    f.rp.on_bytes_sent(1'000, packet * 100);  // one byte-counter event each
    EXPECT_LE(f.rp.target_rate_bps(), kLine);
    EXPECT_LE(f.rp.current_rate_bps(), kLine);
    EXPECT_LE(f.rp.rate_bps(packet * 100), kLineRateBps);
    reached_line_rate = reached_line_rate || f.rp.current_rate_bps() == kLine;
  }
  EXPECT_TRUE(reached_line_rate);  // exactly, not one ulp short
  EXPECT_EQ(f.rp.rate_bps(clock::kNanosPerSecond), kLineRateBps);
}

TEST(DcqcnReactionPoint, LongIdleAfterACutRecoversToLineRate) {
  {
    Fixture f{config::DcqcnConfig{}};
    f.rp.on_cnp(0);
    EXPECT_EQ(f.rp.rate_bps(10 * clock::kNanosPerSecond), kLineRateBps);
    EXPECT_DOUBLE_EQ(f.rp.target_rate_bps(), kLine);
    EXPECT_DOUBLE_EQ(f.rp.alpha(), alpha_after_quiet(10'000'000 - 1));
    EXPECT_EQ(f.rp.rate_bps(20 * clock::kNanosPerSecond), kLineRateBps);
  }
  {
    // From 1 G with the timer alone: additive 5 Mb/s per 300 us, line rate after ~6 s.
    config::DcqcnConfig config;
    config.rate_on_first_cnp_bps = 1'000'000'000;
    Fixture f{config};
    f.rp.on_cnp(0);
    EXPECT_LT(f.rp.rate_bps(clock::kNanosPerSecond), kLineRateBps);
    EXPECT_EQ(f.rp.rate_bps(10 * clock::kNanosPerSecond), kLineRateBps);
    EXPECT_EQ(f.rp.rate_cuts(), 1u);
  }
}

// Laziness must not change results: one reaction point is queried every microsecond, another
// only at a few times; both get the same CNPs and bytes at the same times.
struct Input {
  Nanos at;
  uint64_t bytes;  // 0: a CNP
};

std::vector<Input> scripted_inputs(uint64_t seed, Nanos horizon) {
  std::mt19937_64 rng(seed);
  std::vector<Input> inputs;
  for (Nanos t = 0; t < horizon; t += 100 + static_cast<Nanos>(rng() % 1'900)) {
    inputs.push_back({t, 4'096});
  }
  // Congestion episodes: dense CNPs (several per reduce period), sparse ones, and CNPs exactly
  // on alpha-update and reduce-period boundaries.
  const Nanos episodes[][2] = {{200 * kUs, 260 * kUs},
                               {900 * kUs, 905 * kUs},
                               {1'500 * kUs, 1'700 * kUs},
                               {2'400 * kUs, 2'401 * kUs}};
  for (const auto& episode : episodes) {
    for (Nanos t = episode[0]; t < episode[1]; t += 300 + static_cast<Nanos>(rng() % 9'000)) {
      inputs.push_back({t, 0});
    }
  }
  inputs.push_back({1'000 * kUs, 0});
  inputs.push_back({1'004 * kUs, 0});
  std::stable_sort(inputs.begin(), inputs.end(),
                   [](const Input& a, const Input& b) { return a.at < b.at; });
  return inputs;
}

struct Snapshot {
  uint64_t rate;
  double current;
  double target;
  double alpha;
  uint32_t cuts;
  uint32_t cnps;
  bool operator==(const Snapshot&) const = default;
};

// Feeds every input up to `until` (in order, each at its own time), then queries at `until`.
Snapshot run_until(DcqcnReactionPoint& rp, const std::vector<Input>& inputs, size_t& next,
                   Nanos until) {
  for (; next < inputs.size() && inputs[next].at <= until; ++next) {
    if (inputs[next].bytes == 0) {
      rp.on_cnp(inputs[next].at);
    } else {
      rp.on_bytes_sent(inputs[next].bytes, inputs[next].at);
    }
  }
  const uint64_t rate = rp.rate_bps(until);
  return {rate,       rp.current_rate_bps(), rp.target_rate_bps(),
          rp.alpha(), rp.rate_cuts(),        rp.cnps_received()};
}

void expect_lazy_matches_frequent(const config::DcqcnConfig& config, uint64_t seed) {
  constexpr Nanos kHorizon = 3'000 * kUs;
  constexpr Nanos kEnd = 6'000 * kUs;
  const std::vector<Input> inputs = scripted_inputs(seed, kHorizon);
  const std::vector<Nanos> sparse_times = {1 * kUs,     230 * kUs,   231 * kUs,   777 * kUs,
                                           1'000 * kUs, 1'004 * kUs, 1'650 * kUs, 2'999 * kUs,
                                           4'321 * kUs, kEnd};

  DcqcnReactionPoint frequent;
  DcqcnReactionPoint lazy;
  frequent.reset(&config, kLineRateBps, 0);
  lazy.reset(&config, kLineRateBps, 0);
  size_t frequent_next = 0;
  size_t lazy_next = 0;
  size_t sparse_index = 0;
  uint32_t distinct_rates = 0;
  uint64_t previous_rate = 0;
  for (Nanos t = kUs; t <= kEnd; t += kUs) {
    const Snapshot eager = run_until(frequent, inputs, frequent_next, t);
    distinct_rates += eager.rate != previous_rate ? 1 : 0;
    previous_rate = eager.rate;
    if (sparse_index < sparse_times.size() && sparse_times[sparse_index] == t) {
      const Snapshot sparse = run_until(lazy, inputs, lazy_next, t);
      EXPECT_EQ(sparse, eager) << "at " << t << " ns: rate " << sparse.rate << " vs " << eager.rate
                               << ", target " << sparse.target << " vs " << eager.target
                               << ", alpha " << sparse.alpha << " vs " << eager.alpha;
      ++sparse_index;
    }
  }
  EXPECT_EQ(sparse_index, sparse_times.size());
  // The script must exercise the rules, not just sit at line rate.
  EXPECT_GE(frequent.rate_cuts(), 10u);
  EXPECT_GE(distinct_rates, 50u);
}

TEST(DcqcnReactionPoint, LazyEvaluationMatchesQueriesEveryMicrosecond) {
  expect_lazy_matches_frequent(config::DcqcnConfig{}, 7);
}

TEST(DcqcnReactionPoint, LazyEvaluationMatchesWithBusyTimersAndOtherClampRules) {
  config::DcqcnConfig busy;
  busy.rate_increase_period_ns = 15'000;
  busy.rate_increase_bytes = 16'384;
  busy.fast_recovery_stages = 2;
  busy.additive_increase_bps = 500'000'000;
  busy.hyper_increase_bps = 2'000'000'000;
  busy.clamp_target_rate_after_time_increase = false;
  busy.min_rate_bps = 5'000'000'000;
  expect_lazy_matches_frequent(busy, 11);

  config::DcqcnConfig clamped = busy;
  clamped.clamp_target_rate = true;
  clamped.rate_on_first_cnp_bps = 30'000'000'000;
  clamped.rate_reduce_period_ns = 0;
  clamped.alpha_update_period_ns = 3'000;
  expect_lazy_matches_frequent(clamped, 13);
}

}  // namespace
}  // namespace etwire::transport

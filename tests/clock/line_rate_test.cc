#include "clock/line_rate.h"

#include <gtest/gtest.h>

namespace etwire::clock {
namespace {

constexpr uint64_t k100G = 100'000'000'000;

TEST(LineRateTimer, WholeNanosecondPacket) {
  LineRateTimer timer(k100G);
  // 125 bytes = 1000 bits = 10 ns at 100 Gb/s.
  EXPECT_EQ(timer.transmit(0, 125), 10);
  EXPECT_EQ(timer.transmit(0, 125), 20);  // queued behind the first
  EXPECT_EQ(timer.free_at(), 20);
}

TEST(LineRateTimer, CarriesTheRemainderInsteadOfRoundingEachPacket) {
  LineRateTimer timer(k100G);
  // 4178 bytes = 334.24 ns. Rounding each packet would give 335 ns x 1000 = 335000 ns.
  Nanos end = 0;
  for (int i = 0; i < 1000; ++i) end = timer.transmit(0, 4178);
  EXPECT_EQ(end, 334'240);
  // Reported ends are rounded up: after one packet the wire is busy until 335.
  LineRateTimer single(k100G);
  EXPECT_EQ(single.transmit(0, 4178), 335);
}

TEST(LineRateTimer, MixedSizesStayExact) {
  // Sizes that change now and then (the timer keeps the last size's duration): every end is the
  // exact total rounded up, computed here from scratch.
  constexpr uint64_t rate = 37'000'000'000;  // no size here is a whole nanosecond at this rate
  LineRateTimer timer(rate);
  const uint64_t sizes[] = {4178, 4178, 4178, 86, 86, 4178, 1130, 4178, 4178, 86};
  unsigned __int128 bit_nanos = 0;
  for (int round = 0; round < 100; ++round) {
    for (uint64_t size : sizes) {
      bit_nanos += static_cast<unsigned __int128>(size) * 8 * 1'000'000'000;
      const auto exact_end = static_cast<Nanos>((bit_nanos + rate - 1) / rate);
      ASSERT_EQ(timer.transmit(0, size), exact_end) << "round " << round << " size " << size;
    }
  }
}

TEST(LineRateTimer, ARateChangeRetimesTheSameSize) {
  LineRateTimer timer(k100G);
  EXPECT_EQ(timer.transmit(0, 1000), 80);  // 8000 bits at 100 Gb/s
  timer.set_rate(k100G / 4);
  EXPECT_EQ(timer.transmit(0, 1000), 80 + 320);  // the same size, at the new rate
}

TEST(LineRateTimer, IdleWireStartsOnTheRequestedTime) {
  LineRateTimer timer(k100G);
  timer.transmit(0, 4178);                     // ends at 334.24
  EXPECT_EQ(timer.transmit(1000, 125), 1010);  // idle gap: the fraction is forgotten
  // A request just inside the rounded-up end continues from the exact end.
  LineRateTimer back_to_back(k100G);
  back_to_back.transmit(0, 4178);
  EXPECT_EQ(back_to_back.transmit(334, 4178), 669);  // 668.48 rounded up
  // Waiting for free_at() before each packet is still back to back: no drift.
  LineRateTimer waiting(k100G);
  Nanos end = 0;
  for (int i = 0; i < 1000; ++i) end = waiting.transmit(waiting.free_at(), 4178);
  EXPECT_EQ(end, 334'240);
}

TEST(LineRateTimer, RateChangeRoundsTheCarriedFractionOnce) {
  LineRateTimer timer(k100G);
  timer.transmit(0, 4178);  // 334.24
  timer.set_rate(50'000'000'000);
  // Continues at 335 (the fraction rounded up), then 125 bytes at 50 Gb/s = 20 ns.
  EXPECT_EQ(timer.transmit(0, 125), 355);
}

TEST(LineRateTimer, DurationRoundsUp) {
  EXPECT_EQ(LineRateTimer::duration(125, k100G), 10);
  EXPECT_EQ(LineRateTimer::duration(4178, k100G), 335);
  EXPECT_EQ(LineRateTimer::duration(0, k100G), 0);
  // 1 GiB at 1 Mb/s: no overflow in the intermediate product.
  EXPECT_EQ(LineRateTimer::duration(1ull << 30, 1'000'000), 8'589'934'592'000);
}

TEST(LineRateTimer, SizesEitherSideOfTheWideProductStayExact) {
  // Below 2^31 bytes a duration is worked out in 64 bits, from there in 128: both give the exact
  // end, at a rate that makes neither a whole nanosecond.
  constexpr uint64_t rate = 37'000'000'000;
  const uint32_t sizes[] = {(1u << 31) - 1, 1u << 31, UINT32_MAX, 4178};
  LineRateTimer timer(rate);
  unsigned __int128 bit_nanos = 0;
  for (const uint32_t size : sizes) {
    bit_nanos += static_cast<unsigned __int128>(size) * 8 * 1'000'000'000;
    const auto exact_end = static_cast<Nanos>((bit_nanos + rate - 1) / rate);
    EXPECT_EQ(timer.transmit(0, size), exact_end) << "size " << size;
  }
}

}  // namespace
}  // namespace etwire::clock

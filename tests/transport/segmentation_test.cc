#include "transport/segmentation.h"

#include <gtest/gtest.h>

#include <cstdint>

namespace etwire::transport {
namespace {

TEST(WantsAck, EveryIntervalthPacketAndEveryLastOne) {
  // Powers of two take a mask, the rest a division: both ask on the PSNs whose successor is a
  // multiple of the interval, here checked against that definition, near zero and near the top
  // of the 64-bit counter.
  const uint64_t starts[] = {0, (uint64_t{1} << 24) - 40, UINT64_MAX - 100};
  for (uint32_t interval = 1; interval <= 48; ++interval) {
    for (const uint64_t start : starts) {
      for (uint64_t psn = start; psn < start + 96; ++psn) {
        const bool expected = (psn + 1) % interval == 0;
        ASSERT_EQ(wants_ack(psn, interval, false), expected)
            << "interval " << interval << " psn " << psn;
        ASSERT_TRUE(wants_ack(psn, interval, true));
      }
    }
  }
}

TEST(WantsAck, AnIntervalOfZeroAsksOnlyAtTheEndOfAMessage) {
  EXPECT_FALSE(wants_ack(15, 0, false));
  EXPECT_FALSE(wants_ack(UINT64_MAX, 0, false));
  EXPECT_TRUE(wants_ack(15, 0, true));
}

}  // namespace
}  // namespace etwire::transport

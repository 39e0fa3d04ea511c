#include "nic/frame/payload_pattern.h"

#include <gtest/gtest.h>

#include <random>
#include <stdexcept>

#include "nic/frame/icrc.h"

namespace etwire::frame {
namespace {

TEST(PayloadPattern, BytesAreACountingRampWithRoomForPad) {
  const PayloadPattern pattern(1024, 1024);
  ASSERT_EQ(pattern.size(), 1027u);
  for (size_t i = 0; i < pattern.size(); ++i) {
    ASSERT_EQ(pattern.bytes()[i], static_cast<uint8_t>(i & 0xFF));
    ASSERT_EQ(pattern.bytes()[i], PayloadPattern::byte_at(i));
  }
  EXPECT_EQ(pattern.max_payload(), 1024u);
  EXPECT_EQ(pattern.fast_length(), 1024u);
}

TEST(PayloadPattern, ContributionIsTheRegisterOverEachPrefix) {
  const PayloadPattern pattern(4096, 4096);
  for (size_t length = 0; length <= pattern.size(); ++length) {
    ASSERT_EQ(pattern.contribution(length), crc32_update(0, pattern.bytes(), length)) << length;
  }
}

TEST(PayloadPattern, ExtendEqualsRunningTheCrcForEveryLength) {
  // Every length, so both the dedicated fast table and every combination of powers of two run.
  for (uint32_t fast : {4096u, 1000u, 0u}) {
    const PayloadPattern pattern(4096, fast);
    std::mt19937 random(fast);
    for (size_t length = 0; length <= pattern.size(); ++length) {
      const uint32_t reg = static_cast<uint32_t>(random());
      ASSERT_EQ(pattern.extend(reg, length), crc32_update(reg, pattern.bytes(), length))
          << "fast " << fast << " length " << length;
    }
  }
}

TEST(PayloadPattern, FastLengthBeyondMaximumIsRejected) {
  EXPECT_THROW(PayloadPattern(1024, 1025), std::invalid_argument);
  EXPECT_NO_THROW(PayloadPattern(0, 0));
}

}  // namespace
}  // namespace etwire::frame

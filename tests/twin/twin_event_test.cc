#include "twin/fabric/twin_event.h"

#include <gtest/gtest.h>

#include <cstdint>

namespace etwire::twin {
namespace {

TEST(TwinEventTag, AFrameArrivalCarriesItsLinkAndASlotHintWhereOneFits) {
  const uint32_t links[] = {0, 7, UINT32_MAX};
  for (const uint32_t link : links) {
    const uint64_t tag =
        twin_tag::make(TwinEvent::kFrameArrival, twin_tag::frame_arrival(link, 41));
    EXPECT_EQ(twin_tag::kind(tag), TwinEvent::kFrameArrival);
    EXPECT_EQ(twin_tag::link_of_arrival(twin_tag::payload(tag)), link);
    EXPECT_EQ(twin_tag::slot_hint_of_arrival(twin_tag::payload(tag)), 42u);
  }
  // The largest slot that fits 24 bits once one is added, and the first that does not (no hint).
  constexpr uint32_t kLast = (1u << 24) - 2;
  EXPECT_EQ(twin_tag::slot_hint_of_arrival(twin_tag::frame_arrival(3, kLast)), kLast + 1);
  EXPECT_EQ(twin_tag::slot_hint_of_arrival(twin_tag::frame_arrival(3, kLast + 1)), 0u);
  EXPECT_EQ(twin_tag::link_of_arrival(twin_tag::frame_arrival(3, UINT32_MAX)), 3u);
  EXPECT_EQ(twin_tag::slot_hint_of_arrival(twin_tag::frame_arrival(3, UINT32_MAX)), 0u);
}

}  // namespace
}  // namespace etwire::twin

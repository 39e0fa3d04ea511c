// Token-bucket shapers on switch egress ports (fabric.shaper, port_overrides[].shaper): a full
// bucket's bytes leave at the link's speed, then frames follow at the shaper's rate; an idle
// spell fills the bucket again.
#include <gtest/gtest.h>

#include "clock/line_rate.h"
#include "clock/virtual_clock.h"
#include "tests/twin/nic_driver.h"
#include "twin/fabric/fabric_twin.h"
#include "twin/switch/token_bucket.h"

namespace etwire::twin::testing {
namespace {

constexpr uint64_t k10G = 10'000'000'000;
constexpr uint32_t kFrame = 1000;

// A fabric whose switch port toward "out" is shaped to `shaper` (when it shapes).
config::FabricConfig shaped_toward_out(const config::Shaper& shaper) {
  config::FabricConfig config = quiet_fabric();
  config::FabricPortOverride entry;
  entry.port = "out";
  entry.ecn = config.ecn;
  entry.pfc = config.pfc;
  entry.propagation_delay_ns = config.propagation_delay_ns;
  entry.shaper = shaper;
  config.port_overrides.push_back(entry);
  return config;
}

// When each of `count` frames of kFrame bytes, all sent at 0 from "in" at 100G, reaches "out";
// with `second` more sent at `second_at`.
std::vector<clock::Nanos> arrivals(const config::Shaper& shaper, uint32_t count,
                                   uint32_t second = 0, clock::Nanos second_at = 0) {
  clock::VirtualClock clock;
  std::vector<TwinPortSpec> ports{{"in", k100G}, {"out", k100G}};
  FabricTwin twin(shaped_toward_out(shaper), ports, clock, 1);
  NicDriver driver(twin, clock);
  for (uint32_t i = 0; i < count; ++i) driver.send(data_packet(0, 1, kFrame, i));
  for (uint32_t i = 0; i < second; ++i)
    driver.send(data_packet(0, 1, kFrame, count + i), second_at);
  clock.run_until(clock::kNever);
  std::vector<clock::Nanos> at;
  for (const Delivery& d : driver.data_received_by(1)) at.push_back(d.at);
  EXPECT_EQ(at.size(), count + second);
  return at;
}

const clock::Nanos kAtLink = clock::LineRateTimer::duration(kFrame, k100G);   // 80 ns
const clock::Nanos kAtShaper = clock::LineRateTimer::duration(kFrame, k10G);  // 800 ns

TEST(FabricTwinShaper, AFullBucketLeavesAtTheLinkSpeedThenFramesFollowAtTheRate) {
  // The bucket holds ten frames: the first ten leave back to back at 100G; from then on each
  // waits for its bytes' tokens, 800 ns at 10G (the 80 ns on the wire earn a tenth of them).
  const auto at = arrivals({k10G, 10 * kFrame}, 100);
  for (size_t i = 1; i < 10; ++i) EXPECT_EQ(at[i] - at[i - 1], kAtLink) << "frame " << i;
  for (size_t i = 11; i < at.size(); ++i) {
    EXPECT_NEAR(at[i] - at[i - 1], kAtShaper, 1) << "frame " << i;
  }
  // 90 frames after the burst at 10G: the bucket refilled one frame during the burst's 720 ns.
  EXPECT_NEAR(at.back() - at[9], 90 * kAtShaper - 9 * kAtLink, 2);

  // The same frames unshaped, and with the shaper fabric-wide instead of on the port.
  const auto unshaped = arrivals({}, 100);
  EXPECT_NEAR(unshaped.back() - unshaped.front(), 99 * kAtLink, 1);
  clock::VirtualClock clock;
  config::FabricConfig everywhere = quiet_fabric();
  everywhere.shaper = {k10G, 10 * kFrame};
  std::vector<TwinPortSpec> ports{{"in", k100G}, {"out", k100G}};
  FabricTwin twin(everywhere, ports, clock, 1);
  NicDriver driver(twin, clock);
  for (uint32_t i = 0; i < 100; ++i) driver.send(data_packet(0, 1, kFrame, i));
  clock.run_until(clock::kNever);
  const auto received = driver.data_received_by(1);
  ASSERT_EQ(received.size(), 100u);
  EXPECT_EQ(received.back().at - received.front().at, at.back() - at.front());
}

TEST(FabricTwinShaper, AnIdleSpellFillsTheBucketAgain) {
  // 30 frames drain the bucket; 20 us later (enough to fill 25 kB at 10G) 30 more come, and
  // their first ten again leave at the link's speed.
  const auto at = arrivals({k10G, 10 * kFrame}, 30, 30, 60'000);
  ASSERT_LT(at[29], 60'000);
  for (size_t i = 31; i < 40; ++i) EXPECT_EQ(at[i] - at[i - 1], kAtLink) << "frame " << i;
  EXPECT_NEAR(at[41] - at[40], kAtShaper, 1);
  // Sent so that the switch idles 4 us after frame 29 left it (1080 ns before it arrived; the
  // next frame reaches the switch 1580 ns after it is sent): the bucket holds about half as
  // much, and fewer frames leave at the link's speed.
  const auto sooner = arrivals({k10G, 10 * kFrame}, 30, 30, at[29] + 1'340);
  size_t fast = 0;
  for (size_t i = 31; i < 40 && sooner[i] - sooner[i - 1] == kAtLink; ++i) ++fast;
  EXPECT_GT(fast, 2u);
  EXPECT_LT(fast, 8u);
}

TEST(TokenBucket, WaitsExactlyForTheMissingTokensAndNeverOverflows) {
  TokenBucket bucket({k10G, 2000}, 0);
  EXPECT_EQ(bucket.ready_at(1500, 0), 0);
  bucket.take(1500);  // 500 bytes left
  // 1000 more bytes at 10G: 800 ns, rounded up to the nanosecond.
  EXPECT_EQ(bucket.ready_at(1500, 0), 800);
  EXPECT_EQ(bucket.ready_at(1501, 0), 801);
  EXPECT_EQ(bucket.ready_at(1500, 800), 800);
  // A frame larger than the bucket waits for a full bucket rather than forever.
  EXPECT_EQ(bucket.ready_at(5000, 800), 1200);

  // The fastest rate and largest bucket the configuration takes, after an hour idle: full, not
  // wrapped around.
  TokenBucket large({3'200'000'000'000ull, 1ull << 30}, 0);
  large.take(1u << 30);
  EXPECT_EQ(large.ready_at(1u << 30, 0),
            clock::LineRateTimer::duration(1ull << 30, 3'200'000'000'000ull));
  EXPECT_EQ(large.ready_at(1u << 30, 3'600 * clock::kNanosPerSecond),
            3'600 * clock::kNanosPerSecond);
}

}  // namespace
}  // namespace etwire::twin::testing

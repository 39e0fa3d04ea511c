// The device models a fabric may name beyond RED and drop-tail: token-bucket shapers
// (fabric.shaper, port_overrides[].shaper) and dynamic-threshold buffers (buffer.mode: dynamic,
// buffer.alpha); each read as given, and refused with its place where it could not act.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "control/resolve/config_loader.h"
#include "tests/control/test_configs.h"

namespace etwire::control {
namespace {

using ::testing::HasSubstr;
using testing::kMinimalConfig;
using testing::load_inline;

RunPlan load_fabric(const std::string& fabric, const std::string& transport = "") {
  return load_inline(std::string(kMinimalConfig) + transport + "fabric:\n" + fabric);
}

TEST(DeviceModelConfig, ShapersAreReadFabricWideAndPerPort) {
  const RunPlan none = load_fabric("  topology: single-switch\n");
  ASSERT_TRUE(none.ok()) << none.diagnostics.to_text();
  EXPECT_FALSE(none.config.fabric.shaper.shapes());

  const RunPlan shaped = load_fabric(
      "  shaper: {rate: 50Mbps, burst: 32KiB}\n"
      "  port_overrides:\n"
      "    - {port: p1, shaper: {rate: 1Gbps, burst: 64KiB}}\n"
      "    - {port: p2, pfc: {enabled: true}}\n");
  ASSERT_TRUE(shaped.ok()) << shaped.diagnostics.to_text();
  EXPECT_EQ(shaped.config.fabric.shaper.rate_bps, 50'000'000u);
  EXPECT_EQ(shaped.config.fabric.shaper.burst_bytes, 32u * 1024);
  const auto& overrides = shaped.config.fabric.port_overrides;
  ASSERT_EQ(overrides.size(), 2u);
  EXPECT_EQ(overrides[0].shaper.rate_bps, 1'000'000'000u);
  EXPECT_EQ(overrides[0].shaper.burst_bytes, 64u * 1024);
  // An override without a shaper of its own keeps the fabric's.
  EXPECT_EQ(overrides[1].shaper.rate_bps, 50'000'000u);
}

TEST(DeviceModelConfig, AShaperThatCouldNotActIsRefusedWithItsPlace) {
  const struct {
    std::string fabric;
    std::string transport;
    std::string said;
  } cases[] = {
      {"  shaper: {rate: 50Mbps}\n", "", "fabric.shaper.burst: required key \"burst\" is missing"},
      {"  shaper: {burst: 32KiB}\n", "", "fabric.shaper.rate: required key \"rate\" is missing"},
      {"  shaper: {rate: 100kbps, burst: 32KiB}\n", "", "fabric.shaper.rate"},
      {"  shaper: {rate: 1Gbps, burst: 2GiB}\n", "", "fabric.shaper.burst"},
      {"  shaper: {rate: 1Gbps, burst: 32KiB, peak: 2Gbps}\n", "", "fabric.shaper.peak"},
      // pmtu 4096: frames of up to 4222 bytes on the wire.
      {"  shaper: {rate: 1Gbps, burst: 4221}\n", "transport: {pmtu: 4096}\n",
       "fabric.shaper.burst: a burst of 4221 bytes is smaller than a frame at path MTU 4096 (up "
       "to 4222 bytes on the wire)"},
      {"  port_overrides:\n    - {port: p1, shaper: {rate: 1Gbps, burst: 2000}}\n",
       "transport: {pmtu: 4096}\n", "fabric.port_overrides[0].shaper.burst: a burst of 2000"},
  };
  for (const auto& c : cases) {
    const RunPlan loaded = load_fabric(c.fabric, c.transport);
    EXPECT_FALSE(loaded.ok()) << c.fabric;
    EXPECT_THAT(loaded.diagnostics.to_text(), HasSubstr(c.said)) << c.fabric;
  }
  // The largest frame fits exactly.
  const RunPlan fits =
      load_fabric("  shaper: {rate: 1Gbps, burst: 4222}\n", "transport: {pmtu: 4096}\n");
  EXPECT_TRUE(fits.ok()) << fits.diagnostics.to_text();
}

TEST(DeviceModelConfig, DynamicBuffersTakeAnAlphaAndOnlyThey) {
  const RunPlan plain = load_fabric("  buffer: {mode: dynamic}\n");
  ASSERT_TRUE(plain.ok()) << plain.diagnostics.to_text();
  EXPECT_EQ(plain.config.fabric.buffer.mode, config::BufferMode::kDynamic);
  EXPECT_EQ(plain.config.fabric.buffer.alpha, 1.0);
  const RunPlan eighth = load_fabric("  buffer: {mode: dynamic, alpha: 0.125}\n");
  ASSERT_TRUE(eighth.ok()) << eighth.diagnostics.to_text();
  EXPECT_EQ(eighth.config.fabric.buffer.alpha, 0.125);

  const RunPlan shared = load_fabric("  buffer: {alpha: 2}\n");
  EXPECT_FALSE(shared.ok());
  EXPECT_THAT(shared.diagnostics.to_text(),
              HasSubstr("fabric.buffer.alpha: alpha bounds the shares of a dynamic buffer, not "
                        "of a shared one: give mode: dynamic"));
  for (const char* alpha : {"0", "-1", "2000"}) {
    const RunPlan bad =
        load_fabric(std::string("  buffer: {mode: dynamic, alpha: ") + alpha + "}\n");
    EXPECT_FALSE(bad.ok()) << alpha;
    EXPECT_THAT(bad.diagnostics.to_text(), HasSubstr("fabric.buffer.alpha")) << alpha;
  }
}

}  // namespace
}  // namespace etwire::control

// ports[].dpdk.tx_descriptors: left out, the TX ring follows the port's speed (its half is how
// far pacing catches up); given, it is taken as it is.
#include <gtest/gtest.h>

#include <string>

#include "control/resolve/config_loader.h"
#include "tests/control/test_configs.h"

namespace etwire::control {

using namespace etwire::config;
namespace {

using testing::load_inline;

uint16_t tx_descriptors_at(const std::string& speed, const std::string& dpdk_extra = "") {
  auto loaded = load_inline(testing::dpdk_ring_pair("    speed: " + speed + "\n", dpdk_extra));
  EXPECT_TRUE(loaded.ok()) << loaded.diagnostics.to_text();
  return loaded.ok() ? loaded.config.ports[0].dpdk.tx_descriptors : 0;
}

TEST(DpdkDescriptors, TxRingFollowsTheSpeedWhenLeftOut) {
  EXPECT_EQ(tx_descriptors_at("25Gbps"), 1024);
  EXPECT_EQ(tx_descriptors_at("100Gbps"), 1024);
  EXPECT_EQ(tx_descriptors_at("200Gbps"), 2048);
  EXPECT_EQ(tx_descriptors_at("400Gbps"), 4096);
  EXPECT_EQ(tx_descriptors_at("800Gbps"), 4096);  // the most it picks
}

TEST(DpdkDescriptors, AGivenTxRingIsKept) {
  EXPECT_EQ(tx_descriptors_at("400Gbps", ", tx_descriptors: 512"), 512);
  EXPECT_EQ(tx_descriptors_at("100Gbps", ", tx_descriptors: 8192"), 8192);
}

}  // namespace
}  // namespace etwire::control

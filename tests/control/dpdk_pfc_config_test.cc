// ports[].dpdk.pfc: PFC generation on DPDK ports, its defaults (which follow the receive queue's
// size) and its checks. The broken cases each have a line in configs/dpdk-pfc.yaml.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

#include "control/resolve/config_loader.h"
#include "tests/control/test_configs.h"

namespace etwire::control {

using namespace etwire::config;
namespace {

using ::testing::HasSubstr;
using testing::load_inline;

std::string ring_pair(const std::string& dpdk_a) {
  return testing::dpdk_ring_pair("", dpdk_a);
}

std::string errors_of(const RunPlan& loaded) {
  return loaded.diagnostics.to_text();
}

TEST(DpdkPfc, OffByDefaultWithThresholdsFromTheQueueSize) {
  auto loaded = load_inline(ring_pair(""));
  ASSERT_TRUE(loaded.ok()) << errors_of(loaded);
  const DpdkPfcSettings& pfc = loaded.config.ports[0].dpdk.pfc;
  EXPECT_FALSE(pfc.enabled);
  EXPECT_FALSE(pfc.present);
  EXPECT_EQ(pfc.xoff, 768);  // three quarters of the default 1024 descriptors
  EXPECT_EQ(pfc.xon, 512);   // two thirds of xoff
  EXPECT_EQ(pfc.quanta, 0xFFFF);
}

TEST(DpdkPfc, ReadsEveryKey) {
  auto loaded = load_inline(ring_pair(", pfc: {enabled: true, xoff: 300, xon: 100, quanta: 4096}"));
  ASSERT_TRUE(loaded.ok()) << errors_of(loaded);
  const DpdkPfcSettings& pfc = loaded.config.ports[0].dpdk.pfc;
  EXPECT_TRUE(pfc.enabled);
  EXPECT_TRUE(pfc.present);
  EXPECT_EQ(pfc.xoff, 300);
  EXPECT_EQ(pfc.xon, 100);
  EXPECT_EQ(pfc.quanta, 4096);
  EXPECT_FALSE(loaded.config.ports[1].dpdk.pfc.enabled);
}

TEST(DpdkPfc, ThresholdsLeftOutFollowTheQueueSizeAndXoff) {
  auto small = load_inline(ring_pair(", rx_descriptors: 256, pfc: {enabled: true}"));
  ASSERT_TRUE(small.ok()) << errors_of(small);
  EXPECT_EQ(small.config.ports[0].dpdk.pfc.xoff, 192);
  EXPECT_EQ(small.config.ports[0].dpdk.pfc.xon, 128);

  auto only_xoff = load_inline(ring_pair(", pfc: {enabled: true, xoff: 90}"));
  ASSERT_TRUE(only_xoff.ok()) << errors_of(only_xoff);
  EXPECT_EQ(only_xoff.config.ports[0].dpdk.pfc.xoff, 90);
  EXPECT_EQ(only_xoff.config.ports[0].dpdk.pfc.xon, 60);

  auto smallest = load_inline(ring_pair(", pfc: {enabled: true, xoff: 1}"));
  ASSERT_TRUE(smallest.ok()) << errors_of(smallest);
  EXPECT_EQ(smallest.config.ports[0].dpdk.pfc.xon, 0);
}

TEST(DpdkPfc, EveryPortOfAnEntryGetsTheSettings) {
  auto loaded = load_inline(R"(workload:
  jobs:
    - trace: traces/allreduce_8r/allreduce
ports:
  - name: d
    count: 2
    backend: dpdk
    dpdk: {vdev: "net_ring{i}", pfc: {enabled: true, xoff: 500, xon: 200, quanta: 100}}
mapping:
  jobs: [{placement: block, ranks_per_port: 8}]  # each ring device looped to itself
)");
  ASSERT_TRUE(loaded.ok()) << errors_of(loaded);
  for (const PortConfig& port : loaded.config.ports) {
    EXPECT_TRUE(port.dpdk.pfc.enabled) << port.name;
    EXPECT_EQ(port.dpdk.pfc.xoff, 500) << port.name;
    EXPECT_EQ(port.dpdk.pfc.xon, 200) << port.name;
    EXPECT_EQ(port.dpdk.pfc.quanta, 100) << port.name;
  }
}

TEST(DpdkPfc, OverridesSetItAndAreBlamedForWhatTheyBreak) {
  auto enabled = load_inline(ring_pair(""), {"ports[1].dpdk.pfc.enabled=true"});
  ASSERT_TRUE(enabled.ok()) << errors_of(enabled);
  EXPECT_TRUE(enabled.config.ports[1].dpdk.pfc.enabled);

  auto broken = load_inline(ring_pair(""), {"ports[0].dpdk.pfc.xon=800"});
  EXPECT_FALSE(broken.ok());
  EXPECT_EQ(broken.diagnostics.error_count(), 1u) << errors_of(broken);
  EXPECT_THAT(errors_of(broken),
              HasSubstr("--set ports[0].dpdk.pfc.xon=800: ports[0].dpdk.pfc.xon: port \"a\": PFC "
                        "thresholds out of order: dpdk.pfc.xon (800) must be below dpdk.pfc.xoff "
                        "(768, three quarters of rx_descriptors)"));

  // A smaller queue brings the default xoff down with it, but not an explicit one.
  auto shrunk = load_inline(ring_pair(", pfc: {xoff: 900}"), {"ports[0].dpdk.rx_descriptors=512"});
  EXPECT_FALSE(shrunk.ok());
  EXPECT_THAT(errors_of(shrunk), HasSubstr("inline.yaml:7:50: ports[0].dpdk.pfc.xoff: port \"a\": "
                                           "dpdk.pfc.xoff (900) is above dpdk.rx_descriptors "
                                           "(512)"));
}

TEST(DpdkPfc, IgnoredWithTheRestOfTheDpdkSectionOnOtherBackends) {
  auto loaded = load_inline(std::string(testing::kMinimalConfig) +
                            "    dpdk: {pfc: {enabled: true, xon: 2000}}\n");
  EXPECT_TRUE(loaded.ok()) << errors_of(loaded);
  EXPECT_EQ(loaded.diagnostics.warning_count(), 1u) << errors_of(loaded);
}

}  // namespace
}  // namespace etwire::control

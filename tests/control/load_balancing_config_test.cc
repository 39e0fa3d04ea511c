// fabric.load_balancing: a mode for every tier or per tier, the modes' settings, and the keys
// that would not act refused with the place and the reason.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "control/resolve/config_loader.h"
#include "tests/control/test_configs.h"

namespace etwire::control {
namespace {

using ::testing::HasSubstr;
using testing::kMinimalConfig;
using testing::load_inline;

RunPlan load_fabric(const std::string& fabric) {
  return load_inline(std::string(kMinimalConfig) + "fabric:\n" + fabric);
}

constexpr const char* kLeafSpine = "  topology: leaf-spine\n  leaf_spine: {ports_per_leaf: 4}\n";

TEST(LoadBalancingConfig, EcmpEverywhereUnlessSaid) {
  const RunPlan loaded = load_fabric(kLeafSpine);
  ASSERT_TRUE(loaded.ok()) << loaded.diagnostics.to_text();
  const config::LoadBalancingConfig& lb = loaded.config.fabric.load_balancing;
  EXPECT_EQ(lb.leaf, config::LoadBalancing::kEcmp);
  EXPECT_EQ(lb.spine, config::LoadBalancing::kEcmp);
  EXPECT_EQ(lb.super_spine, config::LoadBalancing::kEcmp);
}

TEST(LoadBalancingConfig, AModeForEveryTierAndOnePerTierOverIt) {
  const RunPlan loaded =
      load_fabric(std::string(kLeafSpine) +
                  "  load_balancing: {mode: adaptive, spine: spray, spray: round-robin, "
                  "adaptive_bias: 8KiB}\n");
  ASSERT_TRUE(loaded.ok()) << loaded.diagnostics.to_text();
  const config::LoadBalancingConfig& lb = loaded.config.fabric.load_balancing;
  EXPECT_EQ(lb.leaf, config::LoadBalancing::kAdaptive);
  EXPECT_EQ(lb.spine, config::LoadBalancing::kSpray);
  EXPECT_EQ(lb.spray, config::SprayOrder::kRoundRobin);
  EXPECT_EQ(lb.adaptive_bias_bytes, 8192u);

  const RunPlan flowlet = load_fabric(
      "  topology: three-tier\n  leaf_spine: {ports_per_leaf: 2}\n  three_tier: "
      "{leaves_per_pod: 2}\n  load_balancing: {super_spine: flowlet, flowlet_gap: 20us}\n");
  ASSERT_TRUE(flowlet.ok()) << flowlet.diagnostics.to_text();
  EXPECT_EQ(flowlet.config.fabric.load_balancing.super_spine, config::LoadBalancing::kFlowlet);
  EXPECT_EQ(flowlet.config.fabric.load_balancing.leaf, config::LoadBalancing::kEcmp);
  EXPECT_EQ(flowlet.config.fabric.load_balancing.flowlet_gap_ns, 20'000u);
}

TEST(LoadBalancingConfig, KeysThatWouldNotActAreRefusedWithTheirPlace) {
  const struct {
    std::string fabric;
    std::string said;
  } cases[] = {
      {"  load_balancing: {mode: adaptive}\n",
       "fabric.load_balancing: a single switch has one path to each port"},
      {std::string(kLeafSpine) + "  load_balancing: {super_spine: spray}\n",
       "fabric.load_balancing.super_spine: super-spines exist in topology three-tier, not "
       "leaf-spine"},
      {std::string(kLeafSpine) + "  load_balancing: {mode: adaptive, spray: random}\n",
       "fabric.load_balancing.spray: spray applies to load balancing mode spray, which no tier "
       "uses"},
      {std::string(kLeafSpine) + "  load_balancing: {leaf: spray, flowlet_gap: 10us}\n",
       "flowlet_gap applies to load balancing mode flowlet"},
      {std::string(kLeafSpine) + "  load_balancing: {leaf: flowlet, adaptive_bias: 1KiB}\n",
       "adaptive_bias applies to load balancing mode adaptive"},
      {std::string(kLeafSpine) + "  load_balancing: {mode: packet-spray}\n",
       "fabric.load_balancing.mode"},
      {std::string(kLeafSpine) + "  load_balancing: {leaf: flowlet, flowlet_gap: 0us}\n",
       "fabric.load_balancing.flowlet_gap"},
      {std::string(kLeafSpine) + "  load_balancing: {leaf: ecmp, trimming: on}\n",
       "fabric.load_balancing.trimming"},
  };
  for (const auto& c : cases) {
    const RunPlan loaded = load_fabric(c.fabric);
    EXPECT_FALSE(loaded.ok()) << c.fabric;
    EXPECT_THAT(loaded.diagnostics.to_text(), HasSubstr(c.said)) << c.fabric;
  }
}

}  // namespace
}  // namespace etwire::control

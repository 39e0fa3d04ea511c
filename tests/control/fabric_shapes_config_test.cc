// The fabric shapes in the configuration: three-tier derivations, rails and planes, what each
// refuses, and traffic across planes found before the first packet.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "control/resolve/config_loader.h"
#include "tests/control/test_configs.h"

namespace etwire::control {
namespace {

using ::testing::HasSubstr;
using testing::load_inline;

// Eight loopback ports at 400G running the bundled 8-rank all-reduce (ring) with `mapping`.
std::string eight_ports(const std::string& fabric, const std::string& mapping = "") {
  return "workload:\n  jobs:\n    - trace: traces/allreduce_8r/allreduce\n"
         "ports:\n  - name: p\n    count: 8\n    speed: 400Gbps\n"
         "collectives: {algorithms: {all_reduce: ring}}\n"
         "fabric: " +
         fabric + "\n" + mapping;
}

const char* kThreeTier =
    "{topology: three-tier, leaf_spine: {ports_per_leaf: 2, spines: 2}, "
    "three_tier: {leaves_per_pod: 2, super_spines: 2";

TEST(FabricShapes, ThreeTierDerivesBothTiersLinkSpeeds) {
  auto loaded = load_inline(eight_ports(std::string(kThreeTier) + "}}"));
  ASSERT_TRUE(loaded.ok()) << loaded.diagnostics.to_text();
  const config::FabricConfig& f = loaded.config.fabric;
  EXPECT_EQ(f.leaf_spine.uplink_speed_bps, 400'000'000'000u);
  EXPECT_EQ(f.three_tier.uplink_speed_bps, 400'000'000'000u);
  loaded = load_inline(eight_ports(std::string(kThreeTier) + ", oversubscription: 2}}"));
  ASSERT_TRUE(loaded.ok()) << loaded.diagnostics.to_text();
  EXPECT_EQ(loaded.config.fabric.three_tier.uplink_speed_bps, 200'000'000'000u);
  // A given speed: 2 leaves x 400G per spine over 2 x 100G.
  loaded = load_inline(eight_ports(std::string(kThreeTier) + ", uplink_speed: 100Gbps}}"));
  ASSERT_TRUE(loaded.ok()) << loaded.diagnostics.to_text();
  EXPECT_DOUBLE_EQ(loaded.config.fabric.three_tier.oversubscription, 4.0);
}

TEST(FabricShapes, WhatEachShapeNeedsAndRefuses) {
  const struct {
    std::string fabric;
    std::string key;
    std::string says;
  } cases[] = {
      {"{topology: three-tier, leaf_spine: {ports_per_leaf: 2}}",
       "fabric.three_tier.leaves_per_pod", "how many leaves each pod holds"},
      {"{topology: leaf-spine, leaf_spine: {ports_per_leaf: 2}, three_tier: {leaves_per_pod: 2}}",
       "fabric.three_tier", "applies to topology three-tier, not leaf-spine"},
      {"{rails: {nics_per_host: 4}}", "fabric.rails", "rails need leaves"},
      {"{topology: leaf-spine, leaf_spine: {ports_per_leaf: 2}, rails: {nics_per_host: 4, "
       "planes: 3}}",
       "fabric.rails.planes", "not a multiple of planes (3)"},
      {"{topology: leaf-spine, leaf_spine: {ports_per_leaf: 2}, rails: {planes: 2}}",
       "fabric.rails.planes", "give nics_per_host too"},
      {"{topology: three-tier, leaf_spine: {ports_per_leaf: 2}, three_tier: {leaves_per_pod: 3}, "
       "rails: {nics_per_host: 2}}",
       "fabric.three_tier.leaves_per_pod", "a pod holds whole groups of rail leaves"},
  };
  for (const auto& c : cases) {
    const auto loaded = load_inline(eight_ports(c.fabric));
    EXPECT_FALSE(loaded.ok()) << c.fabric;
    bool found = false;
    for (const auto& d : loaded.diagnostics.items()) {
      found = found || (d.key_path == c.key && d.message.find(c.says) != std::string::npos);
    }
    EXPECT_TRUE(found) << c.fabric << "\n" << loaded.diagnostics.to_text();
  }
}

TEST(FabricShapes, TrafficAcrossPlanesIsAnErrorBeforeTheFirstPacket) {
  const std::string planes =
      "{topology: leaf-spine, leaf_spine: {ports_per_leaf: 2}, rails: {nics_per_host: 4, "
      "planes: 2}}";
  // A ring over every port: neighbours on rails 0 and 1 are on different planes.
  auto loaded = load_inline(eight_ports(planes));
  EXPECT_FALSE(loaded.ok());
  EXPECT_THAT(
      loaded.diagnostics.to_text(),
      HasSubstr("rank 0 on port \"p0\" (plane 0) sends to rank 1 on port \"p1\" (plane 1)"));
  // The ranks on rails 0 and 2 only (plane 0): valid.
  loaded = load_inline(eight_ports(
      planes,
      "mapping: {jobs: [{placement: explicit, rank_ports: [p0, p0, p2, p2, p4, p4, p6, p6]}]}\n"));
  EXPECT_TRUE(loaded.ok()) << loaded.diagnostics.to_text();
}

}  // namespace
}  // namespace etwire::control

// fabric.faults in the configuration: every kind loads with its keys, and what is wrong is an
// error at its place (a key another kind uses, a missing one, times out of order, a link or port
// the twin does not have, a degraded speed that is not lower, a run the twin does not carry).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "control/resolve/config_loader.h"
#include "tests/control/test_configs.h"

namespace etwire::control {
namespace {

using ::testing::HasSubstr;
using testing::load_inline;

// Eight 100G loopback ports on two leaves of four and two spines, with `faults` (a YAML list).
std::string with_faults(const std::string& faults, const std::string& ports = "") {
  return "workload:\n  jobs:\n    - trace: traces/allreduce_8r/allreduce\n"
         "ports:\n  - name: p\n    count: 8\n    speed: 100Gbps\n" +
         ports +
         "fabric:\n  topology: leaf-spine\n  leaf_spine: {ports_per_leaf: 4, spines: 2}\n"
         "  faults: " +
         faults + "\n";
}

bool reports(const RunPlan& loaded, const std::string& key, const std::string& says) {
  for (const auto& d : loaded.diagnostics.items()) {
    if (d.key_path == key && d.message.find(says) != std::string::npos) return true;
  }
  return false;
}

TEST(FaultConfig, EveryKindLoads) {
  const auto loaded = load_inline(with_faults(
      "[{kind: link-down, link: leaf0/spine1, at: 1ms, until: 2ms, detection: 50us},"
      " {kind: degrade, link: p3, at: 0, speed: 25Gbps},"
      " {kind: pfc-storm, port: p5, priority: 3, at: 100us, until: 300us},"
      " {kind: lossy, link: spine0/leaf1, drop_probability: 0.001, corrupt_probability: 0.01,"
      " reorder_probability: 0.1}]"));
  ASSERT_TRUE(loaded.ok()) << loaded.diagnostics.to_text();
  const auto& faults = loaded.config.fabric.faults;
  ASSERT_EQ(faults.size(), 4u);
  EXPECT_EQ(faults[0].kind, config::FaultKind::kLinkDown);
  EXPECT_EQ(faults[0].at_ns, 1'000'000u);
  EXPECT_EQ(faults[0].until_ns, 2'000'000u);
  EXPECT_EQ(faults[0].detection_ns, 50'000u);
  EXPECT_EQ(faults[1].speed_bps, 25'000'000'000u);
  EXPECT_EQ(faults[2].port, "p5");
  EXPECT_EQ(faults[3].key_path, "fabric.faults[3]");
  EXPECT_DOUBLE_EQ(faults[3].reorder_probability, 0.1);
}

TEST(FaultConfig, MistakesAreErrorsAtTheirPlace) {
  const struct {
    std::string fault;
    std::string key;
    std::string says;
  } cases[] = {
      {"{kind: link-down, link: leaf0/spine1, speed: 10Gbps}", "fabric.faults[0].speed",
       "does not apply to a link-down fault"},
      {"{kind: degrade, link: p1}", "fabric.faults[0].speed", "the link's speed while degraded"},
      {"{kind: pfc-storm, port: p1}", "fabric.faults[0].until", "when the storm ends"},
      {"{kind: link-down, link: leaf0/spine1, at: 2ms, until: 1ms}", "fabric.faults[0].until",
       "must come after at"},
      {"{kind: lossy, link: p1}", "fabric.faults[0].kind", "needs drop_probability"},
      {"{kind: link-down, link: leaf0/spine7}", "fabric.faults[0].link",
       "no link \"leaf0/spine7\""},
      {"{kind: link-down, link: leaf0/spin1}", "fabric.faults[0].link",
       "did you mean \"leaf0/spine1\""},
      {"{kind: pfc-storm, port: p9, until: 1ms}", "fabric.faults[0].port", "no port \"p9\""},
      {"{kind: degrade, link: leaf1/spine0, speed: 400Gbps}", "fabric.faults[0].speed",
       "runs below its own speed"},
      {"{kind: flap, link: p1}", "fabric.faults[0].kind", "flap"},
  };
  for (const auto& c : cases) {
    const auto loaded = load_inline(with_faults("[" + c.fault + "]"));
    EXPECT_FALSE(loaded.ok()) << c.fault;
    EXPECT_TRUE(reports(loaded, c.key, c.says)) << c.fault << "\n" << loaded.diagnostics.to_text();
  }
}

TEST(FaultConfig, FaultsOfOneKindMayNotOverlapOnALink) {
  // The first to end would restore the link as configured while the other still claims it.
  const std::string overlapping[] = {
      "[{kind: degrade, link: p3, speed: 25Gbps},"
      " {kind: degrade, link: p3, at: 1ms, until: 2ms, speed: 10Gbps}]",
      "[{kind: link-down, link: leaf0/spine1, at: 1ms, until: 3ms},"
      " {kind: link-down, link: spine1/leaf0, at: 2ms, until: 4ms}]",
      "[{kind: lossy, link: p1, at: 0, until: 5ms, drop_probability: 0.01},"
      " {kind: lossy, link: p1, at: 1ms, until: 2ms, drop_probability: 0.1}]",
  };
  for (const std::string& faults : overlapping) {
    const auto loaded = load_inline(with_faults(faults));
    EXPECT_FALSE(loaded.ok()) << faults;
    EXPECT_TRUE(reports(loaded, "fabric.faults[1]", "overlaps fabric.faults[0] on the same link"))
        << faults << "\n"
        << loaded.diagnostics.to_text();
  }
  // One after the other, or of different kinds, or on different links: each holds on its own.
  const std::string apart[] = {
      "[{kind: degrade, link: p3, at: 0, until: 1ms, speed: 25Gbps},"
      " {kind: degrade, link: p3, at: 1ms, until: 2ms, speed: 10Gbps}]",
      "[{kind: degrade, link: p3, speed: 25Gbps},"
      " {kind: lossy, link: p3, at: 1ms, until: 2ms, drop_probability: 0.1}]",
      "[{kind: link-down, link: leaf0/spine1}, {kind: link-down, link: leaf0/spine0}]",
  };
  for (const std::string& faults : apart) {
    const auto loaded = load_inline(with_faults(faults));
    EXPECT_TRUE(loaded.ok()) << faults << "\n" << loaded.diagnostics.to_text();
  }
}

TEST(FaultConfig, FaultsNeedEveryPortOnTheTwin) {
  const auto loaded = load_inline(with_faults("[{kind: link-down, link: p1}]",
                                              "  - name: ring\n    backend: dpdk\n"
                                              "    dpdk: {vdev: net_ring0}\n"));
  EXPECT_FALSE(loaded.ok());
  EXPECT_TRUE(reports(loaded, "fabric.faults", "ports that are not on it"))
      << loaded.diagnostics.to_text();
}

}  // namespace
}  // namespace etwire::control

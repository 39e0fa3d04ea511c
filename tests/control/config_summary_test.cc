// The line `etwire validate` prints: what the transport and the switches do beyond classic RoCE
// and ECMP is said (sprayed source ports, out-of-order receivers on every port or on some, load
// balancing, trimming, dynamic buffers, shapers), and nothing is added when they are left at their
// defaults.
#include "control/plan/config_summary.h"

#include <gtest/gtest.h>

#include <string>

#include "tests/control/test_configs.h"

namespace etwire::control {
namespace {

constexpr const char* kLeafSpine = R"(workload:
  jobs:
    - trace: traces/allreduce_8r/allreduce
ports:
  - {name: p, count: 4}
  - {name: q, count: 4}
fabric:
  topology: leaf-spine
  leaf_spine: {ports_per_leaf: 4, spines: 2}
)";

std::string summary_of(const std::string& yaml) {
  const RunPlan loaded = testing::load_inline(yaml);
  EXPECT_TRUE(loaded.ok()) << loaded.diagnostics.to_text();
  return summarize_config(loaded);
}

TEST(ConfigSummary, DefaultsAddNothing) {
  const std::string line = summary_of(kLeafSpine);
  EXPECT_NE(line.find("DCQCN on, leaf-spine twin of 2 leaves"), std::string::npos) << line;
  for (const char* absent :
       {"sprayed", "out-of-order", "load balancing", "trimming", "dynamic", "shape"}) {
    EXPECT_EQ(line.find(absent), std::string::npos) << absent << " in " << line;
  }
}

TEST(ConfigSummary, TheTransportsAndSwitchesModesAreSaid) {
  std::string yaml = kLeafSpine;
  yaml.replace(yaml.find("{name: q, count: 4}"), 19, "{name: q, count: 4, receiver: out-of-order}");
  yaml +=
      "  load_balancing: {spine: adaptive}\n  trimming: {enabled: true}\n"
      "  buffer: {mode: dynamic, alpha: 0.5}\n  shaper: {rate: 50Gbps, burst: 64KiB}\n"
      "  port_overrides: [{port: q0, shaper: {rate: 10Gbps, burst: 64KiB}}]\n"
      "transport: {entropy: {mode: spray, every: 2, values: 8}}\n";
  const std::string line = summary_of(yaml);
  EXPECT_NE(line.find("DCQCN on, source ports sprayed over 8 (every 2 packets), out-of-order "
                      "receivers on 4 of 8 ports, leaf-spine twin"),
            std::string::npos)
      << line;
  EXPECT_NE(line.find("load balancing ecmp at the leaves, adaptive at the spines, trimming, "
                      "dynamic buffer thresholds (alpha 0.5), every switch port shaped to 50 Gb/s, "
                      "shapers toward 1 of the ports"),
            std::string::npos)
      << line;
  const std::string every_port =
      summary_of(std::string(kLeafSpine) + "transport: {receiver: out-of-order}\n");
  EXPECT_NE(every_port.find("DCQCN on, out-of-order receivers, leaf-spine"), std::string::npos)
      << every_port;
}

}  // namespace
}  // namespace etwire::control

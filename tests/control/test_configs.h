// Helpers shared by the control tests: where the shipped configs are, and loading YAML text as
// if it were a file in configs/ (so the bundled trace resolves).
#pragma once

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "control/resolve/config_loader.h"
#include "tests/testing/test_paths.h"

namespace etwire::control::testing {

inline std::string shipped_config(const std::string& name) {
  return (etwire::testing::source_dir() / "configs" / name).string();
}

// Loads `yaml` as "inline.yaml" whose relative paths resolve against configs/.
inline RunPlan load_inline(const std::string& yaml, std::vector<std::string> overrides = {},
                           bool read_traces = true) {
  LoadOptions options;
  options.overrides = std::move(overrides);
  options.read_traces = read_traces;
  return load_config_text(yaml, "inline.yaml", (etwire::testing::source_dir() / "configs").string(),
                          options);
}

// The one error among a load's diagnostics (nullptr if none); fails the test if there are more.
inline const Diagnostic* only_error(const RunPlan& loaded) {
  const Diagnostic* found = nullptr;
  for (const Diagnostic& d : loaded.diagnostics.items()) {
    if (d.severity != Severity::kError) continue;
    EXPECT_EQ(found, nullptr) << loaded.diagnostics.to_text();
    found = &d;
  }
  return found;
}

// The smallest valid run: the bundled 8-rank trace on eight loopback ports, all defaults.
inline const char* kMinimalConfig = R"(workload:
  jobs:
    - trace: traces/allreduce_8r/allreduce
ports:
  - name: p
    count: 8
)";

// Two ring ports cabled back to back, four ranks of the bundled trace on each; `port_a` is added
// to the first port's entry (a line of its own, as "    speed: 400Gbps\n") and `dpdk_a` to its
// dpdk section (as ", lcore: 1").
inline std::string dpdk_ring_pair(const std::string& port_a, const std::string& dpdk_a) {
  return R"(workload:
  jobs:
    - trace: traces/allreduce_8r/allreduce
ports:
  - name: a
    backend: dpdk
)" + port_a +
         R"(    dpdk: {vdev: net_ring0, peer: b)" + dpdk_a + R"(}
  - name: b
    backend: dpdk
    dpdk: {vdev: net_ring1, peer: a}
mapping:
  jobs:
    - placement: block
      ranks_per_port: 4
      hosts: {ranks_per_host: 4, bandwidth: 100GBps}
)";
}

}  // namespace etwire::control::testing

// A port's own receiver (ports[].receiver) in a run, on the fabric twin's loopback ports and on
// the software RNIC, whose QPs the same transport drives. An all-to-all between the two leaves of
// a 2:1 leaf-spine whose switches spray packet by packet reorders what reaches every port; PFC
// keeps it lossless. The out-of-order ports place what arrives early, find nothing missing and
// resend nothing asked; the go-back-N ports find each overtaken packet missing and have what
// follows it sent again.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "control/resolve/config_loader.h"
#include "dataplane/loopback/loopback_data_plane.h"
#include "dataplane/verbs/verbs_backend.h"
#include "engine/run_engine.h"
#include "tests/testing/test_paths.h"
#include "trace/synth/synth.h"

namespace etwire::dataplane {
namespace {

namespace fs = std::filesystem;

class PortReceivers : public ::testing::TestWithParam<bool> {};  // on the software RNIC?

TEST_P(PortReceivers, EachPortReceivesAsItsOwnSettingSays) {
  const bool verbs = GetParam();
  const fs::path dir = testing::make_scratch_dir("port-receivers");
  synth::MicrobenchSpec spec;
  spec.collective = trace::CollectiveType::kAllToAll;
  spec.bytes = 4 << 20;
  spec.ranks = 8;
  const std::string prefix = (dir / "t").string();
  synth::write_microbench(spec, prefix);
  // Ranks 0-3 on the go-back-N ports g0-g3 (leaf 0), 4-7 on the out-of-order ports o0-o3.
  const std::string text = fmt::format(
      R"(run: {{name: t, seed: 1}}
workload:
  jobs:
    - trace: {}
ports:
  - {{name: g, count: 4, speed: 100Gbps, mtu: 4200{}}}
  - {{name: o, count: 4, speed: 100Gbps, mtu: 4200, receiver: out-of-order{}}}
{}mapping:
  jobs:
    - {{placement: block, ranks_per_port: 1, hosts: {{ranks_per_host: 1}}}}
transport:
  dcqcn: {{enabled: false}}
fabric:
  topology: leaf-spine
  leaf_spine: {{ports_per_leaf: 4, spines: 2, oversubscription: 2}}
  load_balancing: {{mode: spray}}
  ecn: {{enabled: false}}
  pfc: {{enabled: true}}
)",
      prefix, verbs ? R"(, backend: verbs, verbs: {device: "g{i}"})" : "",
      verbs ? R"(, backend: verbs, verbs: {device: "o{i}"})" : "",
      verbs ? "verbs: {rnic: software}\n" : "");
  const auto loaded = control::load_config_text(text, (dir / "t.yaml").string(), dir.string());
  ASSERT_TRUE(loaded.ok()) << loaded.diagnostics.to_text();
  engine::RunOptions options;
  options.data_plane =
      verbs ? DataPlaneFactory(make_verbs_data_plane) : loopback_data_plane_factory();
  engine::RunEngine engine(loaded, std::move(options));
  const engine::RunResults results = engine.run();
  ASSERT_EQ(results.status, engine::RunStatus::kCompleted) << results.diagnosis;
  EXPECT_EQ(results.failed_flows, 0u);
  ASSERT_EQ(results.ports.size(), 8u);
  uint64_t resent = 0;
  for (size_t p = 0; p < 8; ++p) {
    const PortRecord& port = results.ports[p];
    SCOPED_TRACE(port.name);
    EXPECT_EQ(port.drops, 0u);
    EXPECT_GT(port.reordered_packets, 0u);
    if (p < 4) {
      EXPECT_GT(port.missing_packets, 0u);
    } else {
      EXPECT_EQ(port.missing_packets, 0u);
    }
    resent += port.retransmitted_packets;
  }
  EXPECT_GT(resent, 0u);
}

INSTANTIATE_TEST_SUITE_P(Backends, PortReceivers, ::testing::Values(false, true),
                         [](const auto& info) { return info.param ? "SoftwareRnic" : "Twin"; });

}  // namespace
}  // namespace etwire::dataplane

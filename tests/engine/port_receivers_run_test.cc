// A port's own receiver in a run on the fabric twin (ports[].receiver): an all-to-all between
// the two leaves of a 2:1 leaf-spine whose switches spray packet by packet over queues of
// different depths, so packets overtake each other on the way to every port. The ports that
// place out-of-order data take them as they come, so nothing sent to them is resent; the
// go-back-N ports answer each overtaken packet with a NAK, and what is sent to them is resent.
// PFC keeps the fabric lossless: a resend can only come from reordering.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "control/resolve/config_loader.h"
#include "engine/flow_sink.h"
#include "engine/run_engine.h"
#include "tests/testing/loopback_options.h"
#include "tests/testing/test_paths.h"
#include "trace/synth/synth.h"

namespace etwire::engine {
namespace {

namespace fs = std::filesystem;

struct KeepFlows final : FlowSink {
  void append(const transport::FlowRecord& record) override { flows.push_back(record); }
  void flush() override {}
  std::vector<transport::FlowRecord> flows;
};

TEST(PortReceiversRun, OnlyWhatGoesToGoBackNPortsIsResent) {
  const fs::path dir = testing::make_scratch_dir("engine-port-receivers");
  synth::MicrobenchSpec spec;
  spec.collective = trace::CollectiveType::kAllToAll;
  spec.bytes = 4 << 20;
  spec.ranks = 8;
  const std::string prefix = (dir / "t").string();
  synth::write_microbench(spec, prefix);
  // Ranks 0-3 on the go-back-N ports g0-g3 (leaf 0), 4-7 on the out-of-order ports o0-o3.
  const std::string text = fmt::format(
      R"(run: {{name: test, seed: 1}}
workload:
  jobs:
    - trace: {}
ports:
  - {{name: g, count: 4, speed: 100Gbps, mtu: 4200}}
  - {{name: o, count: 4, speed: 100Gbps, mtu: 4200, receiver: out-of-order}}
mapping:
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
      prefix);
  auto loaded = control::load_config_text(text, (dir / "test.yaml").string(), dir.string());
  ASSERT_TRUE(loaded.ok()) << loaded.diagnostics.to_text();
  KeepFlows flows;
  RunOptions options = testing::loopback();
  options.flows = &flows;
  RunEngine engine(loaded, options);
  const RunResults results = engine.run();
  ASSERT_EQ(results.status, RunStatus::kCompleted) << results.diagnosis;
  EXPECT_EQ(results.failed_flows, 0u);
  uint64_t resent_to_go_back_n = 0;
  uint64_t resent_to_out_of_order = 0;
  for (const transport::FlowRecord& flow : flows.flows) {
    EXPECT_EQ(flow.status, transport::FlowStatus::kCompleted);
    (flow.tags.dst_rank < 4 ? resent_to_go_back_n : resent_to_out_of_order) +=
        flow.retransmitted_packets;
  }
  ASSERT_EQ(results.ports.size(), 8u);
  for (size_t p = 0; p < 8; ++p) {
    SCOPED_TRACE(results.ports[p].name);
    // Both kinds of port saw packets overtaken on the way.
    EXPECT_GT(results.ports[p].reordered_packets, 0u);
    EXPECT_EQ(results.ports[p].drops, 0u);
  }
  EXPECT_EQ(resent_to_out_of_order, 0u);
  EXPECT_GT(resent_to_go_back_n, 0u);
}

}  // namespace
}  // namespace etwire::engine

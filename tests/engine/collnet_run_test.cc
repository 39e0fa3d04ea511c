// CollNet in a run on the fabric twin (docs/collectives.md, "CollNet"): the single switch's
// aggregation node is a twin host after the run's ports, participant rank world_size; each slice
// owner sends its slice up to it once and gets the sum back once, the rest of the all-reduce
// staying on its host's interconnect; the node's last sends finish before the run ends.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <string>
#include <utility>
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

constexpr uint64_t kMiB = 1 << 20;

struct KeepFlows final : FlowSink {
  void append(const transport::FlowRecord& record) override { flows.push_back(record); }
  void flush() override {}
  std::vector<transport::FlowRecord> flows;
};

struct CollNetResults {
  RunResults results;
  std::vector<transport::FlowRecord> flows;
  // Payload bytes by (src rank, dst rank).
  std::map<std::pair<int32_t, int32_t>, uint64_t> bytes;
};

// One all-reduce of `bytes` over 8 ranks, one per 100 Gb/s loopback port on one switch, in hosts
// of `ranks_per_host`; `collectives` is the collectives section's body.
CollNetResults all_reduce(const std::string& name, uint64_t bytes, uint32_t ranks_per_host,
                          const std::string& collectives) {
  const fs::path dir = testing::make_scratch_dir("engine-collnet-" + name);
  synth::MicrobenchSpec spec;
  spec.collective = trace::CollectiveType::kAllReduce;
  spec.bytes = bytes;
  spec.ranks = 8;
  const std::string prefix = (dir / "t").string();
  synth::write_microbench(spec, prefix);
  const std::string text = fmt::format(
      "run: {{name: test, seed: 1}}\nworkload:\n  jobs:\n    - trace: {}\n"
      "ports:\n  - {{name: h, count: 8, backend: loopback, speed: 100Gbps, mtu: 4200}}\n"
      "mapping:\n  jobs:\n    - placement: block\n      ranks_per_port: 1\n"
      "      hosts: {{ranks_per_host: {}, bandwidth: 400GBps}}\n"
      "collectives:\n{}",
      prefix, ranks_per_host, collectives);
  auto loaded = control::load_config_text(text, (dir / "test.yaml").string(), dir.string());
  EXPECT_TRUE(loaded.ok()) << loaded.diagnostics.to_text();
  KeepFlows flows;
  RunOptions options = testing::loopback();
  options.flows = &flows;
  RunEngine engine(loaded, options);
  CollNetResults run{engine.run(), std::move(flows.flows), {}};
  EXPECT_EQ(run.results.status, RunStatus::kCompleted) << run.results.diagnosis;
  EXPECT_EQ(run.results.failed_flows, 0u);
  EXPECT_EQ(run.results.collectives.size(), 1u);
  for (const transport::FlowRecord& flow : run.flows) {
    EXPECT_EQ(flow.status, transport::FlowStatus::kCompleted);
    run.bytes[{flow.tags.src_rank, flow.tags.dst_rank}] += flow.bytes;
  }
  return run;
}

const std::string kCollNet = "  algorithms: {all_reduce: collnet}\n";

TEST(CollNetRun, EachRankSendsItsBufferUpOnceAndGetsTheSumBack) {
  const CollNetResults run = all_reduce("flat", 8 * kMiB, 1, kCollNet);
  // Rank r <-> the node (participant rank 8), nothing between ranks.
  ASSERT_EQ(run.bytes.size(), 16u);
  for (int32_t r = 0; r < 8; ++r) {
    EXPECT_EQ((run.bytes.at({r, 8})), 8 * kMiB) << r;
    EXPECT_EQ((run.bytes.at({8, r})), 8 * kMiB) << r;
  }
  for (const transport::FlowRecord& flow : run.flows) {
    // The node's host is the twin's ninth, behind the switch port after the ranks'.
    EXPECT_EQ(flow.tags.src_rank == 8 ? flow.src_port : flow.dst_port, 8u);
  }
  // Every flow of the collective, the node's included, was recorded before the run ended.
  const CollectiveRecord& record = run.results.collectives[0];
  EXPECT_EQ(record.flows, run.flows.size());
  EXPECT_EQ(record.wire_bytes, 2 * 8 * 8 * kMiB);
  EXPECT_EQ(record.group_size, 8u);
  // The ranks' requester QPs each sent 8 MiB to the node; the node's, 8 MiB to each rank.
  uint32_t node_requesters = 0;
  for (const QpRecord& qp : run.results.qps) {
    if (!qp.known || qp.stats.role != transport::QpRole::kRequester) continue;
    EXPECT_EQ(qp.stats.counters.bytes, 8 * kMiB);
    if (qp.rank == 8) ++node_requesters;
  }
  EXPECT_EQ(node_requesters, 8u);
  // The run's ports are the eight ranks'.
  EXPECT_EQ(run.results.ports.size(), 8u);
}

TEST(CollNetRun, InHostsOfFourOnlyTheSliceOwnersSendAQuarterUp) {
  const CollNetResults run = all_reduce("hosts", 8 * kMiB, 4, kCollNet);
  // Within a host the ranks reduce over its interconnect, not the fabric: every flow is to or
  // from the node, each rank's slice a quarter of the buffer.
  ASSERT_EQ(run.bytes.size(), 16u);
  for (int32_t r = 0; r < 8; ++r) {
    EXPECT_EQ((run.bytes.at({r, 8})), 2 * kMiB) << r;
    EXPECT_EQ((run.bytes.at({8, r})), 2 * kMiB) << r;
  }
}

TEST(CollNetRun, PipelinedItBeatsARingOnTheSamePorts) {
  // A ring puts 2 (n - 1) / n of the buffer on each port; CollNet once up and once down, which
  // chunks overlap: close to one buffer's time against the ring's 1.75.
  const std::string chunks = "  chunks: 8\n";
  const CollNetResults ring = all_reduce("ring", 8 * kMiB, 1, chunks);
  const CollNetResults collnet = all_reduce("pipelined", 8 * kMiB, 1, kCollNet + chunks);
  const double ratio = static_cast<double>(collnet.results.collectives[0].cct()) /
                       static_cast<double>(ring.results.collectives[0].cct());
  EXPECT_LT(ratio, 0.8);
  EXPECT_GT(ratio, 0.5);
}

}  // namespace
}  // namespace etwire::engine

// collectives.algorithms.all_reduce: collnet in a run: accepted on loopback ports of a
// single-switch twin, where the twin adds the switch's aggregation node as a host after the run's
// ports (twin::aggregation_hosts), with its own addresses and QP numbers, and the plan counts
// what the ranks send it; refused, at the key, where it is not built (control/check/
// collnet_checks.h).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

#include "tests/control/test_configs.h"

namespace etwire::control {
namespace {

using ::testing::HasSubstr;
using testing::kMinimalConfig;
using testing::load_inline;

const std::string kCollNet = "collectives:\n  algorithms:\n    all_reduce: collnet\n";

// Every error's message, one a line.
std::string errors(const RunPlan& loaded) {
  std::string text;
  for (const Diagnostic& d : loaded.diagnostics.items()) {
    if (d.severity == Severity::kError) text += d.key_path + ": " + d.message + "\n";
  }
  return text;
}

TEST(CollNetConfig, TheSingleSwitchTwinHostsTheAggregationNodeAfterThePorts) {
  const RunPlan loaded = load_inline(std::string(kMinimalConfig) + kCollNet);
  ASSERT_TRUE(loaded.ok()) << loaded.diagnostics.to_text();
  ASSERT_TRUE(loaded.twin.layout);
  const twin::FabricLayout& layout = *loaded.twin.layout;
  ASSERT_EQ(layout.hosts(), 9u);
  EXPECT_EQ(layout.host_name(8), "agg0");
  EXPECT_EQ(layout.switch_port(layout.host_switch_port(8)).name, "switch/agg0");
  // Its cable is as fast as the eight ports together.
  EXPECT_EQ(layout.cable(8).speed_bps, 8 * layout.cable(0).speed_bps);

  const JobPlacement& placement = *loaded.placements[0];
  EXPECT_EQ(placement.world_size, 8);
  ASSERT_EQ(placement.aggregator_ports.size(), 1u);
  EXPECT_TRUE(placement.is_aggregator(8));
  EXPECT_EQ(placement.port(8), 8u);
  EXPECT_FALSE(placement.same_host(7, 8));
  const RankEndpoint& node = loaded.addresses->endpoint(0, 8);
  EXPECT_EQ(node.port, 8u);
  EXPECT_EQ(node.ipv4.to_string(), "169.254.255.1");
  EXPECT_EQ(node.mac.to_string(), "02:00:5f:00:00:00");

  // Every rank connects to the node alone, one QP each way: 16 QP ends, the node's after the
  // ranks'.
  const TrafficPlan& traffic = *loaded.traffic;
  ASSERT_EQ(traffic.connections[0].size(), 16u);
  for (const PlannedConnection& c : traffic.connections[0]) {
    EXPECT_TRUE(c.src == 8 || c.dst == 8) << c.src << " -> " << c.dst;
  }
  ASSERT_TRUE(loaded.qp_numbers);
  EXPECT_EQ(loaded.qp_numbers->count(), 16u);
  const auto rank_qp = loaded.qp_numbers->find(0, 3, 8, 0);
  const auto node_qp = loaded.qp_numbers->find(0, 8, 3, 0);
  ASSERT_TRUE(rank_qp && node_qp);
  EXPECT_GT(*node_qp, loaded.qp_numbers->rank(0, 7).first);
  for (const RankTrafficPlan& rank : traffic.jobs[0]) {
    EXPECT_EQ(rank.peers, 1u);
    EXPECT_EQ(rank.max_switches, 1u);
  }

  // Each rank sends its whole buffer up and receives the sum: n / (2 (n - 1)) = 4/7 of what a
  // ring puts on its port.
  const RunPlan ring = load_inline(std::string(kMinimalConfig));
  ASSERT_TRUE(ring.ok()) << ring.diagnostics.to_text();
  for (size_t r = 0; r < 8; ++r) {
    const RankTrafficPlan& mine = traffic.jobs[0][r];
    const RankTrafficPlan& theirs = ring.traffic->jobs[0][r];
    EXPECT_GT(mine.network_bytes_sent, 0u);
    EXPECT_EQ(mine.network_bytes_sent * 7, theirs.network_bytes_sent * 4);
    EXPECT_EQ(mine.network_bytes_received, mine.network_bytes_sent);
  }
  // The ports are the ranks'; the node's host is no run port, but the plan counts what it moves:
  // every rank's bytes, in and out.
  EXPECT_EQ(traffic.ports.size(), 8u);
  ASSERT_EQ(traffic.aggregation_hosts.size(), 1u);
  EXPECT_EQ(traffic.aggregation_hosts[0].bytes_received, 8 * traffic.jobs[0][0].network_bytes_sent);
  EXPECT_EQ(traffic.aggregation_hosts[0].bytes_sent, 8 * traffic.jobs[0][0].network_bytes_sent);
  EXPECT_TRUE(ring.traffic->aggregation_hosts.empty());
}

TEST(CollNetConfig, WithoutItTheTwinHasNoAggregationNode) {
  const RunPlan loaded = load_inline(std::string(kMinimalConfig));
  ASSERT_TRUE(loaded.ok()) << loaded.diagnostics.to_text();
  EXPECT_EQ(loaded.twin.layout->hosts(), 8u);
  EXPECT_TRUE(loaded.placements[0]->aggregator_ports.empty());
}

TEST(CollNetConfig, WhereItIsNotBuiltItIsRefusedAtTheKey) {
  struct Case {
    std::string config;
    std::string says;
  };
  const std::string leaf_spine =
      "fabric:\n  topology: leaf-spine\n  leaf_spine: {ports_per_leaf: 2}\n";
  const Case cases[] = {
      {std::string(kMinimalConfig) + leaf_spine + kCollNet,
       "single-switch twin so far (its one aggregation node); fabric.topology leaf-spine"},
      {std::string(kMinimalConfig) + leaf_spine + "  partitions: 2\n" + kCollNet,
       "on one clock so far; fabric.partitions is 2"},
      {testing::dpdk_ring_pair("", "") + kCollNet,
       "loopback ports only: port \"a\" uses backend dpdk"},
      {"workload:\n  jobs:\n    - trace: traces/allreduce_8r/allreduce\nports:\n"
       "  - {name: p, count: 7}\n  - {name: agg0}\n" +
           kCollNet,
       "the twin names its aggregation node \"agg0\", which port ports[1] is named too"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.config);
    const RunPlan loaded = load_inline(c.config, {}, false);
    const std::string text = errors(loaded);
    EXPECT_THAT(text, HasSubstr("collectives.algorithms.all_reduce: collnet: "));
    EXPECT_THAT(text, HasSubstr(c.says));
  }
}

TEST(CollNetConfig, ARunSplitBetweenEmulatorsIsRefused) {
  const RunPlan loaded = load_inline(
      "workload:\n  jobs:\n    - trace: traces/allreduce_8r/allreduce\n"
      "emulators:\n  - {name: left}\n  - {name: right}\n"
      "ports:\n  - {name: a, count: 4, emulator: left}\n  - {name: b, count: 4, emulator: "
      "right}\n" +
          kCollNet,
      {}, false);
  EXPECT_THAT(errors(loaded), HasSubstr("collnet: runs in one emulator process so far; the run "
                                        "is split between 2"));
}

}  // namespace
}  // namespace etwire::control

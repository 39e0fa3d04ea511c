// `etwire plan`'s arithmetic: bytes per port and rank from the trace and the collective programs.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <map>
#include <set>

#include "control/plan/plan_report.h"
#include "control/plan/traffic_plan.h"
#include "tests/control/test_configs.h"

namespace etwire::control {

using namespace etwire::config;
namespace {

using ::testing::HasSubstr;
using testing::load_inline;
using testing::shipped_config;

constexpr uint64_t kMiB = 1 << 20;

TrafficPlan plan_of(const RunPlan& loaded) {
  EXPECT_TRUE(loaded.ok()) << loaded.diagnostics.to_text();
  Diagnostics problems;
  TrafficPlan plan = plan_traffic(loaded, problems);
  EXPECT_FALSE(problems.has_errors()) << problems.to_text();
  return plan;
}

// The bundled trace: 4 all-reduces of 1 MiB on 8 ranks. A ring sends 2(n-1)/n x S per rank.
TEST(TrafficPlan, RingAllReduceMatchesTheFormula) {
  auto loaded = load_config_file(shipped_config("loopback-demo.yaml"));
  TrafficPlan plan = plan_of(loaded);
  const uint64_t per_rank = 4 * 2 * 7 * kMiB / 8;  // 7 MiB
  for (const auto& port : plan.ports) {
    EXPECT_EQ(port.bytes_sent, per_rank);
    EXPECT_EQ(port.bytes_received, per_rank);
    EXPECT_EQ(port.ranks, 1u);
  }
  for (const auto& rank : plan.jobs[0]) {
    EXPECT_EQ(rank.network_bytes_sent, per_rank);
    EXPECT_EQ(rank.peers, 2u);  // ring predecessor and successor
    EXPECT_EQ(rank.qps, 2u);
  }
  ASSERT_TRUE(plan.busiest_port);
  EXPECT_EQ(*plan.busiest_port, 0u);
  EXPECT_EQ(plan.max_qps_per_peer, 1u);
  // 7 MiB in 1792 packets of 4096 B, each with 82 B of framing, at 100 Gb/s.
  uint64_t wire_bits = (per_rank + 1792 * 82) * 8;
  EXPECT_EQ(plan.ports[0].line_time_ns, (wire_bits * 10 + 999) / 1000);
}

// On the fabric twin each rank's path length is the most switches its network messages cross:
// one on a single switch; on a leaf-spine three for a ring that leaves its leaf, one for a rank
// whose ring neighbours share its leaf. Scale-up traffic crosses none.
TEST(TrafficPlan, PathLengthsOnTheTwin) {
  const TrafficPlan single = plan_of(load_config_file(shipped_config("loopback-demo.yaml")));
  for (const auto& rank : single.jobs[0]) EXPECT_EQ(rank.max_switches, 1u);
  // Eight ranks on eight ports, four per leaf: ranks 3 and 4 (and 7 and 0) are ring neighbours
  // across the spines; 1 and 2 (and 5, 6) talk within their leaf.
  const std::string leaf_spine =
      std::string(testing::kMinimalConfig) +
      "fabric: {topology: leaf-spine, leaf_spine: {ports_per_leaf: 4}}\n";
  const TrafficPlan plan = plan_of(load_inline(leaf_spine));
  std::vector<uint32_t> switches;
  for (const auto& rank : plan.jobs[0]) switches.push_back(rank.max_switches);
  EXPECT_EQ(switches, (std::vector<uint32_t>{3, 1, 1, 3, 3, 1, 1, 3}));
  // A DPDK run's paths are the device under test's: unknown.
  const TrafficPlan dpdk = plan_of(load_config_file(shipped_config("dpdk-ring.yaml")));
  for (const auto& rank : dpdk.jobs[0]) EXPECT_EQ(rank.max_switches, 0u);
}

TEST(TrafficPlan, AlgorithmAndQpSettingsChangeConnections) {
  auto loaded = load_config_file(
      shipped_config("loopback-demo.yaml"),
      {{"collectives.algorithms.all_reduce=bidir-ring", "collectives.qps_per_peer=4"}});
  TrafficPlan plan = plan_of(loaded);
  EXPECT_EQ(plan.max_qps_per_peer, 8u);           // two directions x 4 QPs
  EXPECT_EQ(plan.ports[3].bytes_sent, 7 * kMiB);  // the same bytes, split differently
  auto halving = load_config_file(shipped_config("loopback-demo.yaml"),
                                  {{"collectives.algorithms.all_reduce=halving-doubling"}});
  TrafficPlan hd = plan_of(halving);
  EXPECT_EQ(hd.ports[3].bytes_sent, 7 * kMiB);
  EXPECT_EQ(hd.jobs[0][0].peers, 3u);  // partners at distance 1, 2 and 4
}

TEST(TrafficPlan, ScaleUpTrafficStaysOffThePorts) {
  // Hosts of 4: in one ring in group order only 3 -> 4 and 7 -> 0 cross hosts.
  auto loaded = load_config_file(shipped_config("verbs-lab.yaml"), {{"collectives.channels=0"}});
  TrafficPlan plan = plan_of(loaded);
  EXPECT_EQ(plan.ports[3].bytes_sent, 7 * kMiB);
  EXPECT_EQ(plan.ports[4].bytes_received, 7 * kMiB);
  EXPECT_EQ(plan.ports[1].bytes_sent, 0u);
  EXPECT_EQ(plan.jobs[0][1].scale_up_bytes_sent, 7 * kMiB);
  uint64_t wire = 0;
  for (const auto& port : plan.ports) wire += port.bytes_sent;
  EXPECT_EQ(wire, 2 * 7 * kMiB);
  // By default a channel per NIC of the server: the same bytes cross hosts, a quarter per port.
  auto channels = load_config_file(shipped_config("verbs-lab.yaml"));
  TrafficPlan spread = plan_of(channels);
  for (const auto& port : spread.ports) EXPECT_EQ(port.bytes_sent, 7 * kMiB / 4);
  EXPECT_EQ(spread.jobs[0][1].scale_up_bytes_sent, 7 * kMiB);
}

// The cables of tests/control/configs/off-cable-traffic.yaml join the ports a ring in group order
// crosses (3 -> 4 and 7 -> 0), not those of a ring per NIC: with channels: 0 it is accepted.
TEST(TrafficPlan, CablesCarryTheRingInGroupOrder) {
  const std::string path =
      (etwire::testing::source_dir() / "tests/control/configs/off-cable-traffic.yaml").string();
  EXPECT_TRUE(load_config_file(path).diagnostics.has_errors());
  auto loaded = load_config_file(path, {{"collectives.channels=0"}});
  EXPECT_FALSE(loaded.diagnostics.has_errors()) << loaded.diagnostics.to_text();
  ASSERT_TRUE(loaded.traffic);
  EXPECT_EQ(loaded.traffic->ports[1].bytes_sent, 7 * kMiB);  // b: rank 3 -> rank 4 on c
  EXPECT_EQ(loaded.traffic->ports[0].bytes_sent, 0u);
}

TEST(TrafficPlan, RanksSharingAPortAddUp) {
  auto loaded = load_config_file(shipped_config("dpdk-lab.yaml"));
  TrafficPlan plan = plan_of(loaded);
  EXPECT_EQ(plan.ports[0].ranks, 4u);
  EXPECT_EQ(plan.ports[0].bytes_sent, 4 * 7 * kMiB);
  EXPECT_EQ(plan.ports[1].bytes_received, 4 * 7 * kMiB);
}

TEST(TrafficPlan, ProcessGroupsFromTheCommGroupFile) {
  // Four ranks each issue a 1 KiB all-reduce on group 1 = {0, 1, 2, 3}; rank 0 also one on group
  // 5, which the filter leaves out.
  std::string dir = (etwire::testing::source_dir() / "tests/control/configs").string();
  LoadOptions options;
  RunPlan loaded = load_config_text(R"(workload:
  jobs:
    - trace: traces/pg/trace
      comm_groups: traces/pg/groups.json
      filter: {process_groups: ["1"]}
ports:
  - name: p
    count: 4
)",
                                    "pg.yaml", dir, options);
  TrafficPlan plan = plan_of(loaded);
  for (const auto& port : plan.ports) EXPECT_EQ(port.bytes_sent, 2 * 3 * 1024 / 4);
}

// Per rail: the all-reduce of servers of four ranks on NICs 0..3 leaves every server through NIC
// 3 as one ring in group order (channels: 0), but through all four rails alike by default (a
// channel per NIC) and as NVLS (each GPU's NIC carries its own slice). The all-to-all loads rails
// 0..7 alike either way.
TEST(TrafficPlan, RailsShowHowTheCollectiveSpreadsOverNics) {
  auto rails_of = [](const std::vector<std::string>& overrides) {
    auto loaded = load_config_file(shipped_config("three-tier-rails.yaml"), {overrides});
    const TrafficPlan plan = plan_of(loaded);
    const auto json = plan_to_json(loaded, plan);
    EXPECT_THAT(plan_to_text(loaded, plan), HasSubstr("Rails (fabric.rails"));
    std::vector<uint64_t> sent;
    uint64_t total = 0;
    for (const auto& rail : json["rails"]) sent.push_back(rail["bytes_sent"].get<uint64_t>());
    for (const auto& port : plan.ports) total += port.bytes_sent;
    uint64_t rails_total = 0;
    for (uint64_t bytes : sent) rails_total += bytes;
    EXPECT_EQ(rails_total, total);
    return sent;
  };
  const std::vector<uint64_t> ring = rails_of({"collectives.channels=0"});
  ASSERT_EQ(ring.size(), 8u);
  EXPECT_GT(ring[3], 4 * ring[0]);
  EXPECT_EQ(ring[0], ring[4]);
  for (const auto& overrides :
       {std::vector<std::string>{},
        std::vector<std::string>{"collectives.algorithms.all_reduce=nvls"}}) {
    const std::vector<uint64_t> even = rails_of(overrides);
    ASSERT_EQ(even.size(), 8u);
    for (int r = 1; r < 4; ++r) EXPECT_EQ(even[r], even[0]) << "rail " << r;
    EXPECT_GT(even[0], even[4]);
    EXPECT_LT(even[3], ring[3]);
  }
}

TEST(TrafficPlan, TextAndJsonReports) {
  auto loaded = load_config_file(shipped_config("twin-congestion.yaml"));
  TrafficPlan plan = plan_of(loaded);
  std::string text = plan_to_text(loaded, plan);
  EXPECT_THAT(text, HasSubstr("Plan for "));
  EXPECT_THAT(text, HasSubstr("allreduce-b"));
  EXPECT_THAT(text, HasSubstr("Busiest port: h0: sends 7 MiB, receives 7 MiB per iteration"));
  auto json = plan_to_json(loaded, plan);
  ASSERT_EQ(json["jobs"].size(), 2u);
  EXPECT_EQ(json["jobs"][1]["ranks"][0]["port"], "h1");
  EXPECT_EQ(json["ports"].size(), 16u);
  // Each port numbers its QPs on the wire from 256, its ranks job by job, rank by rank, each
  // rank's QPs contiguous.
  std::map<std::string, uint64_t> next;
  for (const auto& port : json["ports"]) {
    EXPECT_EQ(port["qpn_first"], 256u) << port["name"];
    EXPECT_GT(port["qpn_count"], 0u) << port["name"];
    next[port["name"]] = 256;
  }
  std::set<uint64_t> source_ports;
  for (const auto& job : json["jobs"]) {
    for (const auto& rank : job["ranks"]) {
      uint64_t& at = next[rank["port"]];
      EXPECT_EQ(rank["qpn_first"], at) << job["name"] << " rank " << rank["rank"];
      EXPECT_GT(rank["qpn_count"], 0) << "every rank of a ring all-reduce opens QPs";
      at += rank["qpn_count"].get<uint64_t>();
      source_ports.insert(rank["udp_source_port_first"].get<uint64_t>());
    }
  }
  // The entropy follows the run numbers, unique in the run: no two ranks start on one UDP port.
  EXPECT_EQ(source_ports.size(), json["jobs"][0]["ranks"].size() + json["jobs"][1]["ranks"].size());
  EXPECT_EQ(json["busiest_port"]["name"], "h0");
  EXPECT_EQ(json["busiest_port"]["bytes_sent"], 7 * kMiB);
}

}  // namespace
}  // namespace etwire::control

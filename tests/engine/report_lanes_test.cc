// The engine's work on a partitioned twin's windows of flow reports, in lanes on the window's
// threads (dataplane/report_lanes.h): the run is the same, row for row and in the same order, as
// with all of it on the engine's thread, on one thread or two, and the lanes do take windows.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "control/resolve/config_loader.h"
#include "dataplane/loopback/partitioned_data_plane.h"
#include "engine/run_engine.h"
#include "tests/testing/microbench.h"
#include "tests/testing/test_paths.h"

namespace etwire::engine {
namespace {

namespace fs = std::filesystem;

struct Rows final : FlowSink, NodeSink {
  std::vector<transport::FlowRecord> flows;
  std::vector<NodeRow> nodes;
  void append(const transport::FlowRecord& record) override { flows.push_back(record); }
  void flush() override {}
  void append(const NodeRow& row) override {
    nodes.push_back(row);
    nodes.back().node = nullptr;  // valid during the call only
  }
};

struct LaneRun {
  RunResults results;
  Rows rows;
  uint64_t windows = 0;
  uint64_t windows_in_lanes = 0;
};

LaneRun run(const control::RunPlan& loaded, uint32_t threads, bool lanes) {
  LaneRun out;
  RunOptions options;
  options.flows = &out.rows;
  options.nodes = &out.rows;
  options.report_lanes = lanes;
  const dataplane::PartitionedDataPlane* plane = nullptr;
  options.data_plane = [&](const config::RunConfig& c, transport::FlowObserver& observer) {
    auto made = std::make_unique<dataplane::PartitionedDataPlane>(c, observer, threads);
    plane = made.get();
    return made;
  };
  RunEngine engine(loaded, options);
  out.results = engine.run();
  out.windows = plane->windows_run();
  out.windows_in_lanes = plane->windows_in_lanes();
  return out;
}

// All 16 ports of a leaf-spine of 4 leaves (4 ports each, 2 spines), cut into 4 partitions:
// `symmetric`, one ring all-reduce on a non-blocking fabric, whose members move in lockstep (many
// reports in different lanes share a nanosecond, where the order of their posts shows); else an
// all-reduce and an all-to-all sharing a 4:1 fabric with ECN, PFC and DCQCN. `extra`: more of
// fabric:.
control::RunPlan load(const fs::path& dir, bool symmetric, const std::string& extra) {
  const std::string all_reduce =
      testing::microbench_trace(dir / "ar", trace::CollectiveType::kAllReduce, 8 << 20, 16, 2);
  const std::string jobs =
      symmetric ? fmt::format("    - {{name: ar, trace: {}}}\n", all_reduce)
                : fmt::format("    - {{name: ar, trace: {}}}\n    - {{name: a2a, trace: {}}}\n",
                              all_reduce,
                              testing::microbench_trace(
                                  dir / "a2a", trace::CollectiveType::kAllToAll, 2 << 20, 16, 2));
  const std::string fabric =
      symmetric ? "  leaf_spine: {ports_per_leaf: 4, spines: 2, oversubscription: 1}\n"
                : "  leaf_spine: {ports_per_leaf: 4, spines: 2, oversubscription: 4}\n"
                  "  ecn: {enabled: true, kmin: 20KB, kmax: 200KB, pmax: 0.2}\n"
                  "  pfc: {enabled: true}\n";
  const std::string text = fmt::format(
      "run: {{name: lanes, seed: 3}}\n"
      "workload:\n  jobs:\n{}"
      "ports:\n  - {{name: h, count: 16, backend: loopback, speed: 100Gbps, mtu: 4200}}\n"
      "fabric:\n  partitions: 4\n  topology: leaf-spine\n{}{}"
      "transport:\n  dcqcn: {{enabled: {}}}\n",
      jobs, fabric, extra, !symmetric);
  auto loaded = control::load_config_text(text, (dir / "lanes.yaml").string(), dir.string());
  EXPECT_TRUE(loaded.ok()) << loaded.diagnostics.to_text();
  return loaded;
}

void expect_same_flow(const transport::FlowRecord& x, const transport::FlowRecord& y,
                      const std::string& what) {
  EXPECT_EQ(x.flow_id, y.flow_id) << what;
  EXPECT_EQ(x.tags.collective, y.tags.collective) << what;
  EXPECT_EQ(x.tags.user, y.tags.user) << what;
  EXPECT_EQ(x.qpn, y.qpn) << what;
  EXPECT_EQ(x.bytes, y.bytes) << what;
  EXPECT_EQ(x.posted_at, y.posted_at) << what;
  EXPECT_EQ(x.delivered_at, y.delivered_at) << what;
  EXPECT_EQ(x.finished_at, y.finished_at) << what;
  EXPECT_EQ(x.ecn_marks, y.ecn_marks) << what;
  EXPECT_EQ(x.retransmitted_packets, y.retransmitted_packets) << what;
}

// `a` ran serially. The engine's clock runs one event per instant of a window in lanes rather
// than one per report and one per drain: a run with lanes counts fewer events, and only there.
void expect_same_run(const LaneRun& a, const LaneRun& b, const std::string& what) {
  ASSERT_EQ(a.results.status, RunStatus::kCompleted) << a.results.diagnosis;
  ASSERT_EQ(b.results.status, RunStatus::kCompleted) << b.results.diagnosis;
  EXPECT_EQ(a.results.end_time, b.results.end_time) << what;
  if (b.windows_in_lanes > 0) {
    EXPECT_LT(b.results.events, a.results.events) << what;
  } else {
    EXPECT_EQ(b.results.events, a.results.events) << what;
  }
  EXPECT_EQ(a.windows, b.windows) << what;
  // flows.csv's rows, in the order they are written.
  ASSERT_EQ(a.rows.flows.size(), b.rows.flows.size()) << what;
  for (size_t i = 0; i < a.rows.flows.size(); ++i) {
    expect_same_flow(a.rows.flows[i], b.rows.flows[i], fmt::format("{}, row {}", what, i));
    if (::testing::Test::HasFailure()) return;
  }
  ASSERT_EQ(a.rows.nodes.size(), b.rows.nodes.size()) << what;
  for (size_t i = 0; i < a.rows.nodes.size(); ++i) {
    EXPECT_EQ(a.rows.nodes[i].rank, b.rows.nodes[i].rank) << what << ", node row " << i;
    EXPECT_EQ(a.rows.nodes[i].end, b.rows.nodes[i].end) << what << ", node row " << i;
  }
  // Every result, collectives, iterations, ports, QPs and FCT percentiles among them.
  RunResults x = a.results;
  RunResults y = b.results;
  x.wall_seconds = y.wall_seconds = 0;
  x.events = y.events = 0;
  EXPECT_TRUE(x == y) << what;
}

// `symmetric` and `extra`: load()'s; `lossy`: whether flows are retransmitted.
void expect_lanes_change_nothing(bool symmetric, const std::string& extra, bool lossy) {
  const fs::path dir = testing::make_scratch_dir("engine-report-lanes");
  const control::RunPlan loaded = load(dir, symmetric, extra);
  const LaneRun serial = run(loaded, 1, false);
  EXPECT_EQ(serial.windows_in_lanes, 0u);
  uint64_t retransmitted = 0;
  for (const auto& flow : serial.rows.flows) retransmitted += flow.retransmitted_packets;
  EXPECT_EQ(retransmitted > 0, lossy);
  uint64_t in_lanes = 0;
  for (const uint32_t threads : {1u, 2u}) {
    const LaneRun lanes = run(loaded, threads, true);
    const std::string what = fmt::format("lanes on {} thread(s)", threads);
    // Most windows of long collectives touch only their members' own programs.
    EXPECT_GT(lanes.windows_in_lanes, lanes.windows / 4) << what;
    if (threads > 1) {
      EXPECT_EQ(lanes.windows_in_lanes, in_lanes) << what;
    }
    in_lanes = lanes.windows_in_lanes;
    expect_same_run(serial, lanes, what);
    EXPECT_EQ(serial.results.failed_flows, 0u);
  }
  // Serially on two threads too.
  expect_same_run(serial, run(loaded, 2, false), "serial on 2 threads");
}

TEST(ReportLanes, ARunIsTheSameWithAndWithoutLanes) {
  expect_lanes_change_nothing(false, "", false);
}

TEST(ReportLanes, ARingInLockstepIsTheSameWithAndWithoutLanes) {
  expect_lanes_change_nothing(true, "", false);
}

TEST(ReportLanes, ALossyRunIsTheSameWithAndWithoutLanes) {
  // Lost and reordered frames on a cable through the cut: retransmissions, flows later.
  expect_lanes_change_nothing(
      false,
      "  faults:\n    - {kind: lossy, link: leaf0/spine0, drop_probability: 0.002,"
      " reorder_probability: 0.01}\n",
      true);
}

}  // namespace
}  // namespace etwire::engine

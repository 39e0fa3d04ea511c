// The run engine end to end on the loopback data plane: microbenchmarks reach the link's RoCE
// goodput, upstream trace sets run to completion with the right number of collective instances,
// two jobs sharing a fabric slow each other down, and traces that disagree end in a diagnosis.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>

#include "control/resolve/config_loader.h"
#include "dataplane/loopback/partitioned_data_plane.h"
#include "engine/run_engine.h"
#include "tests/testing/loopback_options.h"
#include "tests/testing/microbench.h"
#include "tests/testing/test_paths.h"
#include "trace/synth/synth.h"

namespace etwire::engine {
namespace {

namespace fs = std::filesystem;

struct JobText {
  std::string name;
  std::string trace;
  std::string comm_groups;  // "" = none
  std::string extra;        // more job keys, YAML lines indented by 6
};

// A config with `ports` loopback ports at 100 Gb/s on a single switch; `extra` is appended.
std::string config_text(const std::vector<JobText>& jobs, int ports,
                        const std::string& extra = "") {
  std::string text = "run: {name: test, seed: 1}\nworkload:\n  jobs:\n";
  for (const JobText& job : jobs) {
    text += fmt::format("    - name: {}\n      trace: {}\n", job.name, job.trace);
    if (!job.comm_groups.empty()) text += fmt::format("      comm_groups: {}\n", job.comm_groups);
    text += job.extra;
  }
  text += fmt::format(
      "ports:\n  - {{name: h, count: {}, backend: loopback, speed: 100Gbps, mtu: 4200}}\n", ports);
  text += extra;
  return text;
}

control::RunPlan load(const std::string& text, const fs::path& dir) {
  auto loaded = control::load_config_text(text, (dir / "test.yaml").string(), dir.string());
  EXPECT_TRUE(loaded.ok()) << loaded.diagnostics.to_text();
  return loaded;
}

RunResults run(const control::RunPlan& loaded) {
  RunEngine engine(loaded, testing::loopback());
  return engine.run();
}

std::string microbench(const fs::path& dir, trace::CollectiveType type, uint64_t bytes,
                       int32_t ranks, uint32_t iterations = 1) {
  return testing::microbench_trace(dir, type, bytes, ranks, iterations);
}

// Large ring collectives are bandwidth-bound: busbw must come within 2 % of what the link can
// carry as payload, pmtu / (pmtu + per-packet overhead) of the line rate.
class RingBusbw : public ::testing::TestWithParam<std::pair<trace::CollectiveType, uint64_t>> {};

TEST_P(RingBusbw, LargeMessagesReachTheLinkGoodput) {
  const auto [type, bytes] = GetParam();
  const fs::path dir = testing::make_scratch_dir("engine-busbw");
  const std::string trace = microbench(dir, type, bytes, 8);
  auto loaded = load(config_text({{"j", trace, "", ""}}, 8), dir);
  const RunResults results = run(loaded);
  ASSERT_EQ(results.status, RunStatus::kCompleted) << results.diagnosis;
  ASSERT_EQ(results.collectives.size(), 1u);
  const CollectiveRecord& record = results.collectives[0];
  EXPECT_EQ(record.algorithm, collectives::Algorithm::kRing);
  EXPECT_EQ(record.group_size, 8u);
  const double ratio = record.busbw_bytes_per_second() / results.goodput_bytes_per_second;
  EXPECT_GE(ratio, 0.98) << "busbw " << record.busbw_bytes_per_second() / 1e9 << " GB/s";
  EXPECT_LE(ratio, 1.0) << "busbw above the link's goodput: the accounting is wrong";
  EXPECT_EQ(results.failed_flows, 0u);
}

INSTANTIATE_TEST_SUITE_P(
    Engine, RingBusbw,
    ::testing::Values(std::make_pair(trace::CollectiveType::kAllReduce, uint64_t{64} << 20),
                      std::make_pair(trace::CollectiveType::kReduceScatter, uint64_t{64} << 20),
                      std::make_pair(trace::CollectiveType::kAllGather, uint64_t{8} << 20)));

// What the goodput is: a 4096-byte PMTU on 100 Gb/s with IPv4 RoCEv2 framing.
TEST(Engine, GoodputIsPayloadShareOfLineRate) {
  const fs::path dir = testing::make_scratch_dir("engine-goodput");
  const std::string trace = microbench(dir, trace::CollectiveType::kAllReduce, 4096, 2);
  auto loaded = load(config_text({{"j", trace, "", ""}}, 2), dir);
  RunEngine engine(loaded, testing::loopback());
  // Ethernet 14 + FCS 4 + preamble and gap 20 + IPv4 20 + UDP 8 + BTH 12 + ICRC 4 = 82 bytes.
  EXPECT_DOUBLE_EQ(engine.results().goodput_bytes_per_second, 4096.0 / (4096 + 82) * 100e9 / 8);
}

// Flow records leave the engine with the QP numbers frames carry (the address plan's), not the
// data plane's own connection numbers, so flows.csv joins a capture.
TEST(Engine, FlowRecordsCarryTheWireQpNumbers) {
  struct Collect final : FlowSink {
    std::vector<transport::FlowRecord> records;
    void append(const transport::FlowRecord& record) override { records.push_back(record); }
    void flush() override {}
  } sink;
  const fs::path dir = testing::make_scratch_dir("engine-wire-qpn");
  const std::string trace = microbench(dir, trace::CollectiveType::kAllReduce, 1 << 20, 4);
  auto loaded = load(config_text({{"j", trace, "", ""}}, 4), dir);
  RunOptions options = testing::loopback();
  options.flows = &sink;
  RunEngine engine(loaded, options);
  ASSERT_EQ(engine.run().status, RunStatus::kCompleted);
  ASSERT_FALSE(sink.records.empty());
  ASSERT_TRUE(loaded.qp_numbers);
  const control::QpNumbering& plan = *loaded.qp_numbers;
  std::set<uint32_t> qpns;
  std::set<std::pair<uint32_t, uint32_t>> requesters;  // by port and wire number
  for (const transport::FlowRecord& r : sink.records) {
    const uint32_t qp = r.tags.qp_index;
    // The wire numbers, each port's own, of the QPs the plan numbered.
    const auto wire = [&](uint32_t port, int32_t rank, int32_t peer) {
      const auto number = plan.find(0, rank, peer, qp);
      return number ? std::optional<uint32_t>(plan.wire(port, *number)) : std::nullopt;
    };
    EXPECT_EQ(r.qpn, wire(r.src_port, r.tags.src_rank, r.tags.dst_rank)) << r.flow_id;
    EXPECT_EQ(r.dest_qpn, wire(r.dst_port, r.tags.dst_rank, r.tags.src_rank)) << r.flow_id;
    qpns.insert(r.qpn);
    requesters.insert({r.src_port, r.qpn});
  }
  // A ring all-reduce over 4 ranks, one per port: each rank sends to its successor on its own
  // QP, and each port numbers its two QPs 256 and 257.
  EXPECT_EQ(requesters.size(), 4u);
  EXPECT_EQ(qpns, (std::set<uint32_t>{256, 257}));
}

TEST(Engine, IterationsAndWarmupAreCountedAndSeparated) {
  const fs::path dir = testing::make_scratch_dir("engine-iterations");
  synth::MicrobenchSpec spec;
  spec.bytes = 256 << 10;
  spec.ranks = 4;
  spec.iterations = 2;  // two all-reduces per trace replay
  spec.compute_us = 50;
  synth::write_microbench(spec, (dir / "t").string());
  auto loaded = load(
      "run: {name: t, seed: 1}\nworkload:\n  iterations: 3\n  warmup_iterations: 2\n  jobs:\n"
      "    - {name: j, trace: t}\nports:\n  - {name: h, count: 4, backend: loopback}\n",
      dir);
  const RunResults results = run(loaded);
  ASSERT_EQ(results.status, RunStatus::kCompleted) << results.diagnosis;
  ASSERT_EQ(results.collectives.size(), 2u * (3 + 2));
  ASSERT_EQ(results.iterations.size(), 5u);
  for (uint32_t i = 0; i < 5; ++i) {
    EXPECT_EQ(results.iterations[i].iteration, i);
    EXPECT_EQ(results.iterations[i].warmup, i < 2);
    EXPECT_GT(results.iterations[i].jct(), 0);
    // 100 us of compute per rank per replay (two 50 us nodes, in sequence with the collectives).
    for (const RankIteration& rank : results.iterations[i].ranks) {
      EXPECT_EQ(rank.compute_ns, 100'000);
      EXPECT_GT(rank.comm_ns, 0);
      EXPECT_EQ(rank.exposed_comm_ns, rank.comm_ns);  // nothing overlaps in a chain
      EXPECT_LE(rank.compute_ns + rank.comm_ns, rank.end - rank.start);
    }
  }
  uint32_t warm = 0;
  for (const CollectiveRecord& record : results.collectives) warm += record.warmup ? 1 : 0;
  EXPECT_EQ(warm, 4u);
  // Sequence numbers continue across replays: the group's n-th collective is instance n.
  std::vector<uint64_t> sequences;
  for (const CollectiveRecord& record : results.collectives) sequences.push_back(record.sequence);
  std::sort(sequences.begin(), sequences.end());
  for (uint64_t n = 0; n < sequences.size(); ++n) EXPECT_EQ(sequences[n], n);
}

TEST(Engine, CommOnlyModeSkipsCompute) {
  const fs::path dir = testing::make_scratch_dir("engine-comm-only");
  synth::MicrobenchSpec spec;
  spec.bytes = 64 << 10;
  spec.ranks = 2;
  spec.compute_us = 1000;
  synth::write_microbench(spec, (dir / "t").string());
  auto full = run(load(config_text({{"j", (dir / "t").string(), "", ""}}, 2), dir));
  auto comm_only =
      run(load(config_text({{"j", (dir / "t").string(), "", "      mode: comm-only\n"}}, 2), dir));
  ASSERT_EQ(full.status, RunStatus::kCompleted);
  ASSERT_EQ(comm_only.status, RunStatus::kCompleted);
  EXPECT_EQ(full.iterations[0].ranks[0].compute_ns, 1'000'000);
  EXPECT_EQ(comm_only.iterations[0].ranks[0].compute_ns, 0);
  EXPECT_EQ(full.end_time - comm_only.end_time, 1'000'000);
}

TEST(Engine, SameSeedGivesTheSameRun) {
  const fs::path dir = testing::make_scratch_dir("engine-determinism");
  const std::string trace = microbench(dir, trace::CollectiveType::kAllToAll, 1 << 20, 8, 2);
  auto loaded = load(config_text({{"j", trace, "", ""}}, 8), dir);
  const RunResults a = run(loaded);
  const RunResults b = run(loaded);
  ASSERT_EQ(a.status, RunStatus::kCompleted);
  EXPECT_EQ(a.end_time, b.end_time);
  EXPECT_EQ(a.events, b.events);
  ASSERT_EQ(a.collectives.size(), b.collectives.size());
  for (size_t i = 0; i < a.collectives.size(); ++i) {
    EXPECT_EQ(a.collectives[i].end, b.collectives[i].end);
  }
}

// The loopback data plane with its ports dealt to 1, 2 or 4 workers (transports) on one virtual
// clock: connections between two workers' ports have their halves on different transports,
// joined by the twin and the flow join. The run is the same flow for flow, and the same again.
struct FlowCollector final : FlowSink {
  std::vector<transport::FlowRecord> records;
  void append(const transport::FlowRecord& record) override { records.push_back(record); }
  void flush() override {}
};

struct WorkerRun {
  RunResults results;
  std::vector<transport::FlowRecord> flows;
};

// A run on the data plane `data_plane` makes, its flow records in flow id order.
WorkerRun run_on(const control::RunPlan& loaded, dataplane::DataPlaneFactory data_plane) {
  FlowCollector sink;
  RunOptions options;
  options.flows = &sink;
  options.data_plane = std::move(data_plane);
  RunEngine engine(loaded, options);
  WorkerRun out{engine.run(), {}};
  out.flows = std::move(sink.records);
  std::sort(out.flows.begin(), out.flows.end(),
            [](const auto& a, const auto& b) { return a.flow_id < b.flow_id; });
  return out;
}

WorkerRun run_on_workers(const control::RunPlan& loaded, uint32_t workers) {
  return run_on(loaded, [workers](const config::RunConfig& c, transport::FlowObserver& observer) {
    return std::make_unique<dataplane::LoopbackDataPlane>(c, observer, workers);
  });
}

void expect_same_run(const WorkerRun& a, const WorkerRun& b, const std::string& what) {
  EXPECT_EQ(a.results.end_time, b.results.end_time) << what;
  EXPECT_EQ(a.results.events, b.results.events) << what;
  ASSERT_EQ(a.flows.size(), b.flows.size()) << what;
  for (size_t i = 0; i < a.flows.size(); ++i) {
    const transport::FlowRecord& x = a.flows[i];
    const transport::FlowRecord& y = b.flows[i];
    ASSERT_EQ(x.flow_id, y.flow_id) << what;
    EXPECT_EQ(x.bytes, y.bytes) << what << " flow " << x.flow_id;
    EXPECT_EQ(x.qpn, y.qpn) << what << " flow " << x.flow_id;
    EXPECT_EQ(x.src_port, y.src_port) << what << " flow " << x.flow_id;
    EXPECT_EQ(x.dst_port, y.dst_port) << what << " flow " << x.flow_id;
    EXPECT_EQ(x.posted_at, y.posted_at) << what << " flow " << x.flow_id;
    EXPECT_EQ(x.delivered_at, y.delivered_at) << what << " flow " << x.flow_id;
    EXPECT_EQ(x.finished_at, y.finished_at) << what << " flow " << x.flow_id;
    EXPECT_EQ(x.ecn_marks, y.ecn_marks) << what << " flow " << x.flow_id;
    EXPECT_EQ(x.retransmitted_packets, y.retransmitted_packets) << what << " flow " << x.flow_id;
  }
  ASSERT_EQ(a.results.ports.size(), b.results.ports.size());
  for (size_t p = 0; p < a.results.ports.size(); ++p) {
    for (const auto& field : dataplane::kPortCounterFields) {
      EXPECT_EQ(a.results.ports[p].*field.member, b.results.ports[p].*field.member)
          << what << " port " << p << " " << field.name;
    }
  }
}

TEST(Engine, OneTwoAndFourLoopbackWorkersRunTheSameFlows) {
  const fs::path dir = testing::make_scratch_dir("engine-workers");
  const std::string trace = microbench(dir, trace::CollectiveType::kAllToAll, 1 << 20, 8, 2);
  auto loaded = load(config_text({{"j", trace, "", ""}}, 8), dir);
  const WorkerRun one = run_on_workers(loaded, 1);
  ASSERT_EQ(one.results.status, RunStatus::kCompleted) << one.results.diagnosis;
  ASSERT_FALSE(one.flows.empty());
  for (uint32_t workers : {2u, 4u}) {
    const WorkerRun many = run_on_workers(loaded, workers);
    ASSERT_EQ(many.results.status, RunStatus::kCompleted) << many.results.diagnosis;
    // All-to-all: most flows cross from one worker's port to another's.
    const auto crossing = std::count_if(many.flows.begin(), many.flows.end(), [&](const auto& f) {
      return f.src_port % workers != f.dst_port % workers;
    });
    EXPECT_GT(crossing, 0) << workers << " workers";
    expect_same_run(one, many, std::to_string(workers) + " workers");
    expect_same_run(many, run_on_workers(loaded, workers),
                    std::to_string(workers) + " workers, again");
  }
}

// Parallel virtual time (fabric.partitions): the twin in partitions, each with its own clock and
// transport, run by one thread or several. The run is the same flow for flow and port for port
// whatever the threads; a flow through a cut keeps its exact timing, posted one lookahead after
// the engine decided to post it.
WorkerRun run_on_partitions(const control::RunPlan& loaded, uint32_t threads) {
  return run_on(loaded, [threads](const config::RunConfig& c, transport::FlowObserver& observer) {
    auto plane = std::make_unique<dataplane::PartitionedDataPlane>(c, observer, threads);
    EXPECT_EQ(plane->threads(), std::min(threads, c.fabric.partitions));
    return plane;
  });
}

// 16 ports on a 4:1 leaf-spine of 4 leaves with ECN and PFC, cut into `partitions`.
std::string partitioned_fabric(uint32_t partitions) {
  return fmt::format(
      "fabric:\n  partitions: {}\n  topology: leaf-spine\n"
      "  leaf_spine: {{ports_per_leaf: 4, spines: 2, oversubscription: 4}}\n"
      "  ecn: {{enabled: true, kmin: 20KB, kmax: 200KB, pmax: 0.2}}\n"
      "  pfc: {{enabled: true}}\n"
      "transport:\n  dcqcn: {{enabled: true}}\n",
      partitions);
}

TEST(Engine, APartitionedTwinRunsTheSameOnOneTwoAndThreeThreads) {
  const fs::path dir = testing::make_scratch_dir("engine-partitions");
  const std::string all_to_all =
      microbench(dir / "a2a", trace::CollectiveType::kAllToAll, 4 << 20, 16, 2);
  const std::string all_reduce =
      microbench(dir / "ar", trace::CollectiveType::kAllReduce, 8 << 20, 16, 2);
  for (uint32_t partitions : {2u, 4u}) {
    // Both jobs on every port: they share the fabric.
    auto loaded = load(config_text({{"a2a", all_to_all, "", ""}, {"ar", all_reduce, "", ""}}, 16,
                                   partitioned_fabric(partitions)),
                       dir);
    const WorkerRun one = run_on_partitions(loaded, 1);
    ASSERT_EQ(one.results.status, RunStatus::kCompleted) << one.results.diagnosis;
    uint64_t cnps = 0;
    uint64_t pauses = 0;
    for (const auto& port : one.results.ports) {
      cnps += port.cnps_received;
      pauses += port.pfc_pauses_received;
    }
    EXPECT_GT(cnps, 0u);
    EXPECT_GT(pauses, 0u);
    for (uint32_t threads : {2u, 3u}) {
      const std::string what = fmt::format("{} partitions on {} threads", partitions, threads);
      const WorkerRun many = run_on_partitions(loaded, threads);
      ASSERT_EQ(many.results.status, RunStatus::kCompleted) << many.results.diagnosis;
      expect_same_run(one, many, what);
      ASSERT_EQ(one.results.collectives.size(), many.results.collectives.size());
      for (size_t i = 0; i < one.results.collectives.size(); ++i) {
        EXPECT_EQ(one.results.collectives[i].last_arrival, many.results.collectives[i].last_arrival)
            << what;
        EXPECT_EQ(one.results.collectives[i].end, many.results.collectives[i].end) << what;
      }
    }
  }
}

TEST(Engine, AFlowThroughACutKeepsItsExactTiming) {
  const fs::path dir = testing::make_scratch_dir("engine-partition-flow");
  // A broadcast between two ranks on the first and last leaf: every message crosses the cut, and
  // only the root sends (data one way, ACKs the other), so nothing else shares its wires.
  const std::string trace = microbench(dir, trace::CollectiveType::kBroadcast, 4 << 20, 2);
  const std::string mapping =
      "mapping:\n  jobs:\n    - {job: j, placement: explicit, rank_ports: [h0, h15]}\n";
  const auto whole = run_on_workers(
      load(config_text({{"j", trace, "", ""}}, 16, partitioned_fabric(1) + mapping), dir), 1);
  const auto cut = run_on_partitions(
      load(config_text({{"j", trace, "", ""}}, 16, partitioned_fabric(2) + mapping), dir), 2);
  ASSERT_EQ(whole.results.status, RunStatus::kCompleted) << whole.results.diagnosis;
  ASSERT_EQ(cut.results.status, RunStatus::kCompleted) << cut.results.diagnosis;
  ASSERT_EQ(whole.flows.size(), cut.flows.size());
  ASSERT_GT(whole.flows.size(), 1u);
  for (size_t i = 0; i < whole.flows.size(); ++i) {
    EXPECT_EQ(cut.flows[i].delivered_at - cut.flows[i].posted_at,
              whole.flows[i].delivered_at - whole.flows[i].posted_at)
        << "flow " << i;
    EXPECT_EQ(cut.flows[i].finished_at - cut.flows[i].posted_at,
              whole.flows[i].finished_at - whole.flows[i].posted_at)
        << "flow " << i;
  }
  // Each message the engine posts reaches the transport one lookahead (the 1 us propagation
  // delay of the cut cables) after it was decided: the first at 1 us, not at 0.
  EXPECT_EQ(whole.flows.front().posted_at, 0);
  EXPECT_EQ(cut.flows.front().posted_at, 1'000);
  EXPECT_GT(cut.results.end_time, whole.results.end_time);
}

// --- Traces that disagree ---------------------------------------------------------------------

TEST(Engine, AMissingCollectiveEndsInADiagnosisNotAHang) {
  const fs::path dir = testing::make_scratch_dir("engine-mismatch");
  const std::string two =
      microbench(dir / "two", trace::CollectiveType::kAllReduce, 64 << 10, 2, 2);
  const std::string one =
      microbench(dir / "one", trace::CollectiveType::kAllReduce, 64 << 10, 2, 1);
  fs::copy_file(one + ".1.et", two + ".1.et", fs::copy_options::overwrite_existing);
  // The configuration checks refuse this set (its members' counts differ). The engine, given it
  // anyway (the files could change between the checks and the run), must still end in a
  // diagnosis rather than hang: the check's error is all that is taken away.
  auto loaded = control::load_config_text(config_text({{"j", two, "", ""}}, 2),
                                          (dir / "test.yaml").string(), dir.string());
  ASSERT_EQ(loaded.diagnostics.error_count(), 1u) << loaded.diagnostics.to_text();
  EXPECT_NE(loaded.diagnostics.to_text().find("disagree on its collectives"), std::string::npos);
  loaded.diagnostics = control::Diagnostics();
  const RunResults results = run(loaded);
  ASSERT_EQ(results.status, RunStatus::kStuck);
  EXPECT_NE(results.diagnosis.find("ALL_REDUCE #1 of the all-ranks group"), std::string::npos)
      << results.diagnosis;
  EXPECT_NE(results.diagnosis.find("1 of 2 arrived; missing rank 1"), std::string::npos)
      << results.diagnosis;
  EXPECT_NE(results.diagnosis.find("rank 1 finished its trace"), std::string::npos)
      << results.diagnosis;
  EXPECT_EQ(results.collectives.size(), 1u);  // the first one completed and is reported
}

TEST(Engine, CollectivesOfDifferentTypesAreReportedAsMismatched) {
  const fs::path dir = testing::make_scratch_dir("engine-mismatch-type");
  const std::string a = microbench(dir / "a", trace::CollectiveType::kAllReduce, 64 << 10, 2);
  const std::string b = microbench(dir / "b", trace::CollectiveType::kAllGather, 64 << 10, 2);
  fs::copy_file(b + ".1.et", a + ".1.et", fs::copy_options::overwrite_existing);
  const RunResults results = run(load(config_text({{"j", a, "", ""}}, 2), dir));
  ASSERT_EQ(results.status, RunStatus::kStuck);
  EXPECT_NE(results.diagnosis.find("mismatched traces"), std::string::npos) << results.diagnosis;
  EXPECT_NE(results.diagnosis.find("ALL_GATHER"), std::string::npos) << results.diagnosis;
  EXPECT_NE(results.diagnosis.find("ALL_REDUCE"), std::string::npos) << results.diagnosis;
}

TEST(Engine, AnUnmatchedSendIsNamed) {
  const fs::path dir = testing::make_scratch_dir("engine-unmatched-send");
  synth::MicrobenchSpec spec;
  spec.collective = std::nullopt;  // rank r sends to r + 1 and receives from r - 1
  spec.bytes = 32 << 10;
  spec.ranks = 2;
  spec.iterations = 2;
  fs::create_directories(dir / "two");
  fs::create_directories(dir / "one");
  synth::write_microbench(spec, (dir / "two" / "t").string());
  spec.iterations = 1;
  synth::write_microbench(spec, (dir / "one" / "t").string());
  fs::copy_file(dir / "one" / "t.1.et", dir / "two" / "t.1.et",
                fs::copy_options::overwrite_existing);
  const RunResults results =
      run(load(config_text({{"j", (dir / "two" / "t").string(), "", ""}}, 2), dir));
  ASSERT_EQ(results.status, RunStatus::kStuck);
  // microbench tags each replay's send/recv with its iteration: the second send has tag 1.
  EXPECT_NE(results.diagnosis.find("send/recv #0 from rank 0 to rank 1 (tag 1"), std::string::npos)
      << results.diagnosis;
  EXPECT_NE(results.diagnosis.find("the RECV on rank 1 was never issued"), std::string::npos)
      << results.diagnosis;
}

TEST(Engine, TheWatchdogStopsARunThatStopsProgressing) {
  const fs::path dir = testing::make_scratch_dir("engine-watchdog");
  const std::string trace = microbench(dir, trace::CollectiveType::kAllReduce, 1 << 20, 2);
  // Every packet on every link is lost: flows retry until the watchdog, which is shorter than
  // the retry budget, gives up on the run.
  auto loaded = load(
      "run: {name: t, seed: 1, watchdog: 2ms}\nworkload:\n  jobs:\n    - {name: j, trace: t}\n"
      "ports:\n  - {name: h, count: 2, backend: loopback}\nfabric:\n  drop_probability: 1\n",
      dir);
  const RunResults results = run(loaded);
  ASSERT_EQ(results.status, RunStatus::kStuck);
  EXPECT_NE(results.diagnosis.find("no node and no flow completed for 2000000 ns"),
            std::string::npos)
      << results.diagnosis;
  EXPECT_NE(results.diagnosis.find("every member arrived"), std::string::npos) << results.diagnosis;
  EXPECT_LT(results.end_time, 10'000'000);
}

// --- Two jobs on one fabric ---------------------------------------------------------------------

const FctPercentiles* fct_of(const RunResults& results, trace::CollectiveType type) {
  for (const FctPercentiles& fct : results.fct) {
    if (fct.kind == type) return &fct;
  }
  return nullptr;
}

// The bundled mixed configuration against its all-to-all job alone: sharing the leaf-spine with an
// all-reduce job stretches the all-to-all's flow completion times.
TEST(Engine, AllToAllTailGrowsWhenAnAllReduceSharesTheFabric) {
  const fs::path configs = testing::source_dir() / "configs";
  auto mixed = control::load_config_file((configs / "mixed-allreduce-alltoall.yaml").string());
  auto alone = control::load_config_file((configs / "alltoall-alone.yaml").string());
  ASSERT_TRUE(mixed.ok()) << mixed.diagnostics.to_text();
  ASSERT_TRUE(alone.ok()) << alone.diagnostics.to_text();
  const RunResults with = run(mixed);
  const RunResults without = run(alone);
  ASSERT_EQ(with.status, RunStatus::kCompleted) << with.diagnosis;
  ASSERT_EQ(without.status, RunStatus::kCompleted) << without.diagnosis;
  const FctPercentiles* shared = fct_of(with, trace::CollectiveType::kAllToAll);
  const FctPercentiles* own = fct_of(without, trace::CollectiveType::kAllToAll);
  ASSERT_NE(shared, nullptr);
  ASSERT_NE(own, nullptr);
  EXPECT_EQ(shared->flows, own->flows);
  EXPECT_GT(shared->p99, own->p99 * 11 / 10) << "p99 " << shared->p99 << " vs " << own->p99;
  EXPECT_GT(shared->p50, own->p50);
  // The congestion that does it is visible in the counters.
  uint64_t marks = 0;
  for (const PortRecord& port : with.ports) marks += port.ecn_marked_received;
  EXPECT_GT(marks, 0u);
}

// --- Upstream trace sets ------------------------------------------------------------------------

// Instances the trace set must produce: per process group, the collectives its first member issues
// (members issue the same number, or the run would not complete), plus every send.
uint64_t expected_instances(const control::TraceFacts& facts) {
  uint64_t instances = 0;
  for (const auto& [group, members] : facts.groups) {
    for (const auto& [call, count] : facts.ranks[static_cast<size_t>(members[0])].collectives) {
      if (call.group_id == group) instances += count;
    }
  }
  for (const control::RankComm& rank : facts.ranks) {
    for (const auto& [transfer, count] : rank.sends) instances += transfer.peer >= 0 ? count : 0;
  }
  return instances;
}

struct UpstreamSet {
  const char* name;
  const char* prefix;       // under the upstream directory
  const char* comm_groups;  // "" = none
};

class UpstreamRun : public ::testing::TestWithParam<UpstreamSet> {};

TEST_P(UpstreamRun, CompletesWithEveryInstance) {
  ETWIRE_REQUIRE_UPSTREAM_TRACES();
  const UpstreamSet& set = GetParam();
  const fs::path upstream = testing::upstream_traces();
  const fs::path dir = testing::make_scratch_dir("engine-upstream");
  const std::string prefix = (upstream / set.prefix).string();
  const int32_t ranks = trace::TraceSet::discover(prefix).world_size();
  std::string groups = *set.comm_groups ? (upstream / set.comm_groups).string() : "";
  auto loaded = load(config_text({{"j", prefix, groups, ""}}, ranks), dir);
  ASSERT_TRUE(loaded.traces[0].has_value());
  const uint64_t expected = expected_instances(*loaded.traces[0]);
  ASSERT_GT(expected, 0u);
  const RunResults results = run(loaded);
  ASSERT_EQ(results.status, RunStatus::kCompleted) << results.diagnosis;
  EXPECT_EQ(results.collectives.size(), expected);
  EXPECT_EQ(results.failed_flows, 0u);
  ASSERT_EQ(results.iterations.size(), 1u);
  EXPECT_EQ(results.iterations[0].ranks.size(), static_cast<size_t>(ranks));
}

INSTANTIATE_TEST_SUITE_P(
    Engine, UpstreamRun,
    ::testing::Values(
        UpstreamSet{"ar4", "astra-sim/microbench_all_reduce_4npus_1MB/all_reduce", ""},
        UpstreamSet{"ar8", "astra-sim/microbench_all_reduce_8npus_1MB/all_reduce", ""},
        UpstreamSet{"ar16", "astra-sim/microbench_all_reduce_16npus_1MB/all_reduce", ""},
        UpstreamSet{"ag4", "astra-sim/microbench_all_gather_4npus_1MB/all_gather", ""},
        UpstreamSet{"ag8", "astra-sim/microbench_all_gather_8npus_1MB/all_gather", ""},
        UpstreamSet{"ag16", "astra-sim/microbench_all_gather_16npus_1MB/all_gather", ""},
        UpstreamSet{"rs4", "astra-sim/microbench_reduce_scatter_4npus_1MB/reduce_scatter", ""},
        UpstreamSet{"rs8", "astra-sim/microbench_reduce_scatter_8npus_1MB/reduce_scatter", ""},
        UpstreamSet{"rs16", "astra-sim/microbench_reduce_scatter_16npus_1MB/reduce_scatter", ""},
        UpstreamSet{"a2a4", "astra-sim/microbench_all_to_all_4npus_1MB/all_to_all", ""},
        UpstreamSet{"a2a8", "astra-sim/microbench_all_to_all_8npus_1MB/all_to_all", ""},
        UpstreamSet{"a2a16", "astra-sim/microbench_all_to_all_16npus_1MB/all_to_all", ""},
        UpstreamSet{"custom_ring", "astra-sim/custom_ring_allreduce_8npus_1MB/custom_allreduce",
                    ""},
        UpstreamSet{"stg_denseA", "astra-sim-artifacts/stg_denseA_4npus/denseA",
                    "astra-sim-artifacts/stg_denseA_4npus/denseA.json"},
        UpstreamSet{"stg_denseB", "astra-sim-artifacts/stg_denseB_4npus/denseB",
                    "astra-sim-artifacts/stg_denseB_4npus/denseB.json"},
        UpstreamSet{"torus_2d", "astra-sim-artifacts/T2D-analytical/trace",
                    "astra-sim-artifacts/T2D-analytical/comm_group.json"},
        UpstreamSet{"torus_2d_ns3", "astra-sim-artifacts/T2D-ns3/trace",
                    "astra-sim-artifacts/T2D-ns3/comm_group.json"},
        UpstreamSet{"torus_1d", "astra-sim-artifacts/T1D-analytical/trace",
                    "astra-sim-artifacts/T1D-analytical/comm_group.json"},
        UpstreamSet{"fsdp", "astra-sim-hybrid-parallelism/pytorch_fsdp_2ranks/chakra_trace",
                    "astra-sim-hybrid-parallelism/pytorch_fsdp_2ranks/comm_group.test-2.json"}),
    [](const ::testing::TestParamInfo<UpstreamSet>& info) { return std::string(info.param.name); });

// run.time_scale holds virtual time back to a fraction of the wall clock: the run takes at least
// its virtual time divided by the scale, and nothing else about it changes.
TEST(RunEngine, TimeScaleSlowsTheReplayAndChangesNothingElse) {
  auto loaded = control::load_config_file(
      (etwire::testing::source_dir() / "configs" / "loopback-demo.yaml").string());
  ASSERT_TRUE(loaded.ok()) << loaded.diagnostics.to_text();
  RunEngine plain(loaded, testing::loopback());
  const RunResults expected = plain.run();

  constexpr double kScale = 0.02;  // 7.8 ms of virtual time in about 0.4 s
  RunOptions options = testing::loopback();
  options.time_scale = kScale;
  RunEngine paced(loaded, options);
  const RunResults& results = paced.run();
  ASSERT_EQ(results.status, RunStatus::kCompleted);
  EXPECT_GE(results.wall_seconds, static_cast<double>(results.end_time) / 1e9 / kScale * 0.99);
  EXPECT_EQ(results.end_time, expected.end_time);
  EXPECT_EQ(results.events, expected.events);
  EXPECT_EQ(results.flows, expected.flows);
}

}  // namespace
}  // namespace etwire::engine

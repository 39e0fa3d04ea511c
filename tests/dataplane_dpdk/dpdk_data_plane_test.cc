// The DPDK data plane in-process on ring devices (no NIC): two ports cabled back to back, an
// 8-rank all-to-all with four ranks on each (a host of four per port, so only traffic between
// hosts takes the cable), run through the engine on the main lcore only, with
// one port on a worker lcore, and with two queues per port on two worker lcores, crossed. Every
// run carries the same flows and bytes between the same ranks as the loopback data plane, joins
// every message's two halves, and its two ports count each other's frames.
//
// The EAL is started once per process, so every case here uses the same EAL arguments. Queue
// and lcore counts are the test's own; a case that cannot start DPDK here is skipped, saying why.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <iostream>
#include <map>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "control/resolve/config_loader.h"
#include "dataplane/dpdk/dpdk_data_plane.h"
#include "engine/run_engine.h"
#include "nic/dpdk/eal.h"
#include "tests/dataplane_dpdk/shell_support.h"
#include "tests/testing/loopback_options.h"
#include "tests/testing/test_paths.h"

namespace etwire::dataplane {
namespace {

namespace fs = std::filesystem;

struct ShellRun {
  engine::RunResults results;
  std::vector<transport::FlowRecord> flows;
};

// `ports`: the ports section. Ranks 0-3 on the first port, 4-7 on the second.
std::string config_text(const std::string& trace, const std::string& ports) {
  return fmt::format(R"(run: {{name: shell, seed: 1, watchdog: 10s}}
workload:
  jobs:
    - {{name: a2a, trace: {}}}
dpdk:
  eal_args: {}
  mbufs: 4095
ports:
{}
mapping:
  jobs:
    - {{job: a2a, placement: block, ranks_per_port: 4,
       hosts: {{ranks_per_host: 4, bandwidth: 100GBps}}}}
telemetry:
  metrics: {{listen: "127.0.0.1:0"}}
)",
                     trace, kShellEalArgs, ports);
}

std::string ring_ports(const std::string& a_extra, const std::string& b_extra) {
  return fmt::format(
      "  - {{name: a, backend: dpdk, speed: 25Gbps, mtu: 4200, dpdk: {{vdev: net_ring0, peer: "
      "b{}}}}}\n  - {{name: b, backend: dpdk, speed: 25Gbps, mtu: 4200, dpdk: {{vdev: net_ring1, "
      "peer: a{}}}}}\n",
      a_extra, b_extra);
}

class DpdkShell : public AllToAllSuite<256 << 10> {
 protected:
  control::RunPlan load(const std::string& ports) {
    auto loaded = control::load_config_text(config_text(trace_, ports),
                                            (dir_ / "shell.yaml").string(), dir_.string());
    EXPECT_TRUE(loaded.ok()) << loaded.diagnostics.to_text();
    return loaded;
  }

  // Runs on DPDK ring devices; skips the test when DPDK cannot start here.
  std::optional<ShellRun> run_dpdk(const std::string& ports) {
    auto loaded = load(ports);
    try {
      nic::dpdk::start_eal(eal_arguments(loaded.config));
    } catch (const std::runtime_error& e) {
      skip_reason_ = e.what();
      return std::nullopt;
    }
    Collect sink;
    engine::RunOptions options;
    options.flows = &sink;
    options.data_plane = [](const config::RunConfig& c, transport::FlowObserver& observer) {
      return std::make_unique<DpdkDataPlane>(c, observer);
    };
    engine::RunEngine engine(loaded, options);
    ShellRun run{engine.run(), std::move(sink.records)};
    return run;
  }

  ShellRun run_loopback() {
    auto loaded = load(
        "  - {name: a, backend: loopback, speed: 25Gbps, mtu: 4200}\n"
        "  - {name: b, backend: loopback, speed: 25Gbps, mtu: 4200}\n");
    Collect sink;
    engine::RunOptions options = testing::loopback();
    options.flows = &sink;
    engine::RunEngine engine(loaded, options);
    return {engine.run(), std::move(sink.records)};
  }

  // Same flows between the same ranks, every one completed and joined, and the ports' frame
  // counts agree across the cable.
  void expect_like_loopback(const ShellRun& dpdk) {
    const ShellRun loopback = run_loopback();
    ASSERT_EQ(loopback.results.status, engine::RunStatus::kCompleted);
    ASSERT_EQ(dpdk.results.status, engine::RunStatus::kCompleted) << dpdk.results.diagnosis;
    EXPECT_EQ(dpdk.results.failed_flows, 0u);
    ASSERT_EQ(dpdk.flows.size(), loopback.flows.size());
    std::map<std::pair<int32_t, int32_t>, uint64_t> bytes_dpdk;
    std::map<std::pair<int32_t, int32_t>, uint64_t> bytes_loopback;
    for (const auto& f : dpdk.flows) {
      EXPECT_EQ(f.status, transport::FlowStatus::kCompleted);
      EXPECT_NE(f.delivered_at, clock::kNever) << "flow " << f.flow_id << " was not joined";
      EXPECT_LE(f.delivered_at, f.finished_at);
      bytes_dpdk[{f.tags.src_rank, f.tags.dst_rank}] += f.bytes;
    }
    for (const auto& f : loopback.flows)
      bytes_loopback[{f.tags.src_rank, f.tags.dst_rank}] += f.bytes;
    EXPECT_EQ(bytes_dpdk, bytes_loopback);
    ASSERT_EQ(dpdk.results.ports.size(), 2u);
    const PortRecord& a = dpdk.results.ports[0];
    const PortRecord& b = dpdk.results.ports[1];
    EXPECT_GT(a.tx_packets, 0u);
    EXPECT_EQ(a.tx_packets, b.rx_packets);
    EXPECT_EQ(b.tx_packets, a.rx_packets);
    EXPECT_EQ(a.drops + b.drops + a.missing_packets + b.missing_packets, 0u);
    // Nothing was lost, so a resend can only come from a retransmit timer that fired while the
    // worker polling the ACK was held off its CPU (a busy machine), never from a NAK.
    const uint64_t resent = a.retransmitted_packets + b.retransmitted_packets;
    if (resent > 0) {
      EXPECT_GT(a.timeouts + b.timeouts, 0u) << resent << " packets resent with no timeout";
      std::cout << resent << " packets resent after " << a.timeouts + b.timeouts
                << " timeouts, none lost (a worker held off its CPU)\n";
    }
  }

  std::string skip_reason_;
};

TEST_F(DpdkShell, OnTheMainLcore) {
  const auto run = run_dpdk(ring_ports("", ""));
  if (!run) GTEST_SKIP() << "DPDK cannot start here: " << skip_reason_;
  expect_like_loopback(*run);
}

TEST_F(DpdkShell, OnePortOnAWorkerLcore) {
  // Every connection has one half on each core: deliveries and finishes reach the join from two
  // report rings.
  const auto run = run_dpdk(ring_ports("", ", lcore: 1"));
  if (!run) GTEST_SKIP() << "DPDK cannot start here: " << skip_reason_;
  expect_like_loopback(*run);
}

TEST_F(DpdkShell, TwoQueuesPerPortOnCrossedLcores) {
  const auto run =
      run_dpdk(ring_ports(", queues: 2, lcores: [1, 2]", ", queues: 2, lcores: [2, 1]"));
  if (!run) GTEST_SKIP() << "DPDK cannot start here: " << skip_reason_;
  expect_like_loopback(*run);
  for (const PortRecord& port : run->results.ports) {
    ASSERT_EQ(port.queues.size(), 2u) << port.name;
    for (const PortQueueRecord& queue : port.queues) {
      EXPECT_GT(queue.tx_packets, 0u) << port.name << " queue " << queue.queue;
      EXPECT_EQ(queue.handed_over, 0u) << port.name;  // a ring cable keeps each queue's frames
    }
  }
}

}  // namespace
}  // namespace etwire::dataplane

// Two emulator processes, each driving its own DPDK port, cabled to each other by a net_memif
// pair: each opens only its half of a connection between them, and the messages of both
// directions cross the cable, acknowledged by the other process's transport. MPI serves only the
// setup (the socket path, a barrier once both halves are open) and the final tally.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <chrono>
#include <memory>
#include <string>

#include "cluster/session.h"
#include "control/resolve/config_loader.h"
#include "dataplane/dpdk/dpdk_data_plane.h"
#include "tests/testing/test_paths.h"

namespace etwire::dataplane {
namespace {

namespace fs = std::filesystem;

struct Tally final : transport::FlowObserver {
  void on_flow_delivered(const transport::FlowRecord&) override { ++delivered_here; }
  void on_flow_finished(const transport::FlowRecord& record) override {
    ++finished;
    if (record.status == transport::FlowStatus::kCompleted) ++completed;
    if (record.delivered_at == clock::kNever) ++without_delivery;
  }
  void on_delivered_to_responder(uint32_t, clock::Nanos, uint32_t, uint32_t immediate) override {
    ++remote;
    tags.push_back(immediate);
  }
  std::vector<uint32_t> tags;
  int delivered_here = 0;
  int finished = 0;
  int completed = 0;
  int without_delivery = 0;
  int remote = 0;
};

constexpr int kMessages = 20;

TEST(DpdkAcrossProcesses, MessagesCrossAMemifCableBothWays) {
  const cluster::Session& session = cluster::Session::current();
  ASSERT_EQ(session.size(), 2) << "run me under mpirun -np 2";
  // Process 0 picks where the cable's socket is; both use it.
  std::string socket;
  if (session.rank() == 0) socket = (testing::make_scratch_dir("memif") / "cable.sock").string();
  socket = session.all_gather(socket)[0];
  const std::string text = fmt::format(
      R"(run: {{name: memif, seed: 1}}
workload:
  jobs:
    - {{name: j, trace: {}}}
dpdk:
  eal_args: [--no-pci, --no-huge, -m, "512"]
emulators: [{{name: left}}, {{name: right}}]
ports:
  - {{name: a, backend: dpdk, emulator: left, speed: 1Gbps, mtu: 4200,
     dpdk: {{vdev: "net_memif0,role=client,id=0,socket={},rsize=11,bsize=8192", peer: b}}}}
  - {{name: b, backend: dpdk, emulator: right, speed: 1Gbps, mtu: 4200,
     dpdk: {{vdev: "net_memif1,role=server,id=0,socket={},rsize=11,bsize=8192", peer: a}}}}
mapping:
  jobs: [{{job: j, ranks_per_port: 4, hosts: {{ranks_per_host: 4, bandwidth: 100GBps}}}}]
transport: {{retransmit_timeout: 100ms, retry_count: 7}}
)",
      (testing::source_dir() / "configs/traces/allreduce_8r/allreduce").string(), socket, socket);
  const fs::path dir = testing::make_scratch_dir("memif-config");
  auto loaded = control::load_config_text(text, (dir / "memif.yaml").string(), dir.string());
  ASSERT_TRUE(loaded.ok()) << loaded.diagnostics.to_text();
  const config::RunConfig& config = loaded.config;

  Tally tally;
  // The server end of the cable listens before the client end connects.
  std::unique_ptr<DpdkDataPlane> plane_of_mine;
  for (int turn = 0; turn < 2; ++turn) {
    if (turn == 1 - session.rank()) {
      plane_of_mine =
          std::make_unique<DpdkDataPlane>(config, tally, static_cast<uint32_t>(session.rank()));
    }
    session.barrier();
  }
  DpdkDataPlane& plane = *plane_of_mine;
  plane.start();
  auto end = [&](uint32_t port, uint32_t qpn) {
    return WireEndpoint{port, config.ports[port].mac, config.ports[port].ipv4, std::nullopt, qpn};
  };
  // a -> b on QPs 100/200, b -> a on 201/101: each process opens the halves on its port.
  const auto forward = plane.connect({end(0, 100), end(1, 200), 49200});
  const auto backward = plane.connect({end(1, 201), end(0, 101), 49201});
  // No message before both processes hold their halves.
  session.barrier();
  const auto mine = session.rank() == 0 ? forward : backward;
  // Each message carries its identity to the other process in its last packet's immediate.
  const uint32_t tag_base = session.rank() == 0 ? 0x1000 : 0x2000;
  for (int m = 0; m < kMessages; ++m) {
    transport::FlowTags tags;
    tags.wire_tag = tag_base + static_cast<uint32_t>(m);
    plane.post(mine, 64 << 10, tags);
  }
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while ((tally.finished < kMessages || tally.remote < kMessages) &&
         std::chrono::steady_clock::now() < give_up) {
    plane.poll();
  }
  // Keep acknowledging the other process's messages until it has finished too.
  const auto everyone_done = session.arrive();
  while (!everyone_done->passed() && std::chrono::steady_clock::now() < give_up) plane.poll();
  plane.finish();
  EXPECT_EQ(tally.finished, kMessages);
  EXPECT_EQ(tally.completed, kMessages);
  // Their deliveries were seen by the other process, not here.
  EXPECT_EQ(tally.without_delivery, kMessages);
  EXPECT_EQ(tally.delivered_here, 0);
  EXPECT_EQ(tally.remote, kMessages);
  // The other process's tags, in its posting order.
  const uint32_t their_base = session.rank() == 0 ? 0x2000 : 0x1000;
  ASSERT_EQ(tally.tags.size(), static_cast<size_t>(kMessages));
  for (int m = 0; m < kMessages; ++m) {
    EXPECT_EQ(tally.tags[static_cast<size_t>(m)], their_base + static_cast<uint32_t>(m)) << m;
  }
  const PortRecord here = plane.port_record(static_cast<size_t>(session.rank()));
  EXPECT_EQ(here.absent, 0u);
  EXPECT_GE(here.tx_bytes, uint64_t{kMessages} * (64 << 10));
  const PortRecord there = plane.port_record(static_cast<size_t>(1 - session.rank()));
  EXPECT_EQ(there.absent, ~uint32_t{0});  // the other process counts its own port
}

}  // namespace
}  // namespace etwire::dataplane

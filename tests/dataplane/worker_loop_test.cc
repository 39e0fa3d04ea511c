// The loop around a worker, stepped on the test's thread: commands in (a connection, messages),
// due events on the wall clock, the backend's poll hook, flow reports out in order, and counters
// published from the transport and the hook.
#include "dataplane/worker_loop.h"

#include <gtest/gtest.h>

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "tests/transport/ideal_wire.h"

namespace etwire::dataplane {
namespace {

constexpr uint64_t k100G = 100'000'000'000;

// The backend's side: two ports of an ideal wire that needs no polling; device counters of its
// own so that the published sample shows where each field came from.
struct FakeBackend final : PollHook {
  void on_connect(uint32_t connection, const nic::WireRoute&) override {
    connections.push_back(connection);
  }
  void poll_ports(clock::Nanos, const clock::Scheduler&) override { ++polls; }
  void device_counters(uint32_t port, PortCounters& counters, uint64_t& handed_over) override {
    counters.tx_packets = 1000 + port;
    counters.drops = 7;
    handed_over = 3;
  }
  std::vector<uint32_t> connections;
  uint64_t polls = 0;
};

TEST(WorkerLoop, RunsCommandsEventsAndThePollHookAndReportsInOrder) {
  config::TransportConfig config;
  FakeBackend backend;
  // The wire outlives the loop, whose transport lets go of its ports when it goes.
  std::unique_ptr<transport::testing::IdealWire> wire;
  WorkerLoop loop(config, backend);
  clock::WallClock reference;
  loop.clock().share_time_with(reference);
  wire = std::make_unique<transport::testing::IdealWire>(loop.clock(), 2, k100G, 1'000);
  loop.worker().add_port(wire->port(0), 0, 0, {}, {});
  loop.worker().add_port(wire->port(1), 1, 0, {}, {});
  loop.publish_ports({0, 1});

  WorkerCommand connect;
  connect.kind = WorkerCommand::Kind::kConnect;
  connect.connection = 0;
  connect.udp_source_port = 49152;
  connect.route.requester = {0, 0x100, 0};
  connect.route.responder = {1, 0x200, 0};
  ASSERT_TRUE(loop.send(connect));
  WorkerCommand post;
  post.requester_qpn = 0x100;
  post.bytes = 2 * 4096;
  ASSERT_TRUE(loop.send(post));
  ASSERT_TRUE(loop.send(post));

  std::vector<WorkerReport> reports;
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (reports.size() < 4 && std::chrono::steady_clock::now() < give_up) {
    loop.run_once();
    loop.drain_reports([&](const WorkerReport& r) { reports.push_back(r); });
  }
  EXPECT_EQ(backend.connections, std::vector<uint32_t>{0});
  EXPECT_EQ(loop.connections_open(), 1u);
  EXPECT_GT(backend.polls, 0u);
  // Both halves are in this worker: each message's delivery is reported before its finish, and
  // each kind in posting order.
  ASSERT_EQ(reports.size(), 4u);
  std::vector<size_t> delivered;
  std::vector<size_t> finished;
  for (size_t i = 0; i < reports.size(); ++i) {
    (reports[i].kind == WorkerReport::Kind::kDelivered ? delivered : finished).push_back(i);
  }
  ASSERT_EQ(delivered.size(), 2u);
  ASSERT_EQ(finished.size(), 2u);
  for (size_t m = 0; m < 2; ++m) {
    EXPECT_LT(delivered[m], finished[m]);
    const transport::FlowRecord& done = reports[finished[m]].record;
    EXPECT_EQ(done.qpn, 0x100u);
    EXPECT_EQ(done.dest_qpn, 0x200u);
    EXPECT_LE(reports[delivered[m]].record.delivered_at, done.finished_at);
  }
  EXPECT_LT(reports[finished[0]].record.flow_id, reports[finished[1]].record.flow_id);
  EXPECT_GT(loop.events_run(), 0u);

  loop.publish();
  const PortSample sent = loop.sample(0);
  EXPECT_EQ(sent.counters.tx_packets, 1000u);  // the hook's
  EXPECT_EQ(sent.counters.drops, 7u);
  EXPECT_EQ(sent.rx_handed_over, 3u);
  EXPECT_EQ(sent.counters.data_packets, 4u);  // the transport's
  EXPECT_EQ(loop.sample(1).counters.tx_packets, 1001u);
}

TEST(WorkerLoop, AFailureInTheLoopIsReportedOnTheMainThread) {
  config::TransportConfig config;
  FakeBackend backend;
  WorkerLoop loop(config, backend);
  WorkerCommand post;  // on a requester nobody opened
  post.requester_qpn = 0x999;
  post.bytes = 1;
  ASSERT_TRUE(loop.send(post));
  loop.loop();  // returns once the pass throws
  EXPECT_THROW(loop.check("worker 1"), std::runtime_error);
  try {
    loop.check("worker 1");
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("worker 1: transport: post on requester QP 2457"),
              std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace etwire::dataplane

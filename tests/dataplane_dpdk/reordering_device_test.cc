// A device that reorders, between two DPDK ports: ring devices the test makes itself, and a
// thread between their rings that passes every frame across except that it holds one data frame
// in sixteen back until the next data frame of the same connection has gone ahead of it (one
// packet overtaken, as a switch spraying over unequal paths does). Senders spray their UDP source
// port per packet (transport.entropy). An out-of-order receiver places the overtaken packets
// where they belong: every flow completes and nothing is resent. A go-back-N receiver answers
// each with a sequence NAK and the sender goes back. The run's own capture files show the
// entropy: every data packet carries the source port its PSN selects.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <pcap/pcap.h>
#include <pthread.h>
#include <rte_eth_ring.h>
#include <rte_ethdev.h>
#include <rte_mbuf.h>
#include <rte_ring.h>

#include <array>
#include <atomic>
#include <chrono>
#include <filesystem>
#include <iostream>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "control/resolve/config_loader.h"
#include "dataplane/dpdk/dpdk_data_plane.h"
#include "engine/run_engine.h"
#include "nic/dpdk/eal.h"
#include "nic/frame/frame_reader.h"
#include "tests/dataplane_dpdk/shell_support.h"
#include "tests/testing/test_paths.h"

namespace etwire::dataplane {
namespace {

namespace fs = std::filesystem;

constexpr uint32_t kHoldEvery = 16;  // data frames per direction; each 16th is held back
// Frames longer than this carry data; ACKs and NAKs are under a hundred bytes.
constexpr uint32_t kDataFrameBytes = 1000;
// A held frame whose connection sends nothing more (its message's last packet) goes on after this.
constexpr auto kHoldAtMost = std::chrono::microseconds(50);
constexpr uint32_t kSprayEvery = 2;
constexpr uint32_t kSprayValues = 4;

// One direction of the device: frames from one port's TX ring to the other's RX ring.
class ReorderingDirection {
 public:
  ReorderingDirection(rte_ring* from, rte_ring* to) : from_(from), to_(to) {}
  ReorderingDirection(const ReorderingDirection&) = delete;
  ReorderingDirection& operator=(const ReorderingDirection&) = delete;

  // Moves what waits; returns whether anything did.
  bool pass() {
    std::array<rte_mbuf*, 32> burst{};
    const unsigned n = rte_ring_dequeue_burst(from_, reinterpret_cast<void**>(burst.data()),
                                              burst.size(), nullptr);
    for (unsigned i = 0; i < n; ++i) take(burst[i]);
    if (held_ != nullptr && std::chrono::steady_clock::now() - held_since_ > kHoldAtMost) {
      forward(std::exchange(held_, nullptr));
    }
    return n > 0;
  }
  void release() {
    if (held_ != nullptr) forward(std::exchange(held_, nullptr));
  }

  uint64_t overtaken = 0;  // held frames that the next frame of their connection overtook
  uint64_t lost = 0;       // frames the receiving ring had no room for

 private:
  // The destination QP number of a RoCEv2 data frame, or nullopt for any other frame.
  std::optional<uint32_t> data_connection(rte_mbuf* frame) {
    if (rte_pktmbuf_pkt_len(frame) <= kDataFrameBytes) return std::nullopt;
    frame::ParsedFrame parsed;
    if (reader_.parse(rte_pktmbuf_mtod(frame, const uint8_t*), rte_pktmbuf_data_len(frame),
                      parsed) != frame::FrameStatus::kRoce) {
      return std::nullopt;
    }
    return parsed.packet.dest_qpn;
  }

  void take(rte_mbuf* frame) {
    const std::optional<uint32_t> connection = data_connection(frame);
    if (connection && held_ == nullptr && ++data_frames_ % kHoldEvery == 0) {
      held_ = frame;
      held_connection_ = *connection;
      held_since_ = std::chrono::steady_clock::now();
      return;
    }
    forward(frame);
    if (held_ != nullptr && connection == held_connection_) {
      forward(std::exchange(held_, nullptr));
      ++overtaken;
    }
  }
  void forward(rte_mbuf* frame) {
    if (rte_ring_enqueue(to_, frame) != 0) {
      rte_pktmbuf_free(frame);
      ++lost;
    }
  }

  rte_ring* from_;
  rte_ring* to_;
  frame::PayloadPattern pattern_{4096, 4096};
  frame::FrameReader reader_{pattern_};
  uint64_t data_frames_ = 0;
  rte_mbuf* held_ = nullptr;
  uint32_t held_connection_ = 0;
  std::chrono::steady_clock::time_point held_since_;
};

// Two ring devices, a and b, and the reordering device between them on a thread of its own.
class ReorderingDevice {
 public:
  ReorderingDevice() {
    static int instance = 0;
    ++instance;
    for (size_t r = 0; r < rings_.size(); ++r) {
      const std::string name = fmt::format("reorder{}r{}", instance, r);
      rings_[r] = rte_ring_create(name.c_str(), 4096, static_cast<int>(rte_socket_id()),
                                  RING_F_SP_ENQ | RING_F_SC_DEQ);
      if (rings_[r] == nullptr) throw std::runtime_error("cannot create ring " + name);
    }
    // rings_: a's TX, a's RX, b's TX, b's RX.
    ids_[0] = make_device(fmt::format("reorder{}a", instance), rings_[1], rings_[0]);
    ids_[1] = make_device(fmt::format("reorder{}b", instance), rings_[3], rings_[2]);
    a_to_b_.emplace(rings_[0], rings_[3]);
    b_to_a_.emplace(rings_[2], rings_[1]);
  }
  ~ReorderingDevice() {
    stop();
    for (uint16_t id : ids_) rte_eth_dev_close(id);
    for (rte_ring* ring : rings_) rte_ring_free(ring);
  }
  ReorderingDevice(const ReorderingDevice&) = delete;
  ReorderingDevice& operator=(const ReorderingDevice&) = delete;

  uint16_t port_id(size_t port) const { return ids_[port]; }

  // Off the main lcore's CPU, which threads started after the EAL inherit.
  void start() {
    thread_ = std::thread([this] {
      while (!stopping_.load(std::memory_order_relaxed)) {
        const bool moved = a_to_b_->pass() | b_to_a_->pass();
        if (!moved) std::this_thread::yield();
      }
      a_to_b_->release();
      b_to_a_->release();
    });
    cpu_set_t set;
    CPU_ZERO(&set);
    for (unsigned cpu : nic::dpdk::cpus_before_eal()) CPU_SET(cpu, &set);
    pthread_setaffinity_np(thread_.native_handle(), sizeof(set), &set);
  }
  void stop() {
    stopping_ = true;
    if (thread_.joinable()) thread_.join();
  }

  uint64_t overtaken() const { return a_to_b_->overtaken + b_to_a_->overtaken; }
  uint64_t lost() const { return a_to_b_->lost + b_to_a_->lost; }

 private:
  static uint16_t make_device(const std::string& name, rte_ring* rx, rte_ring* tx) {
    const int id = rte_eth_from_rings(name.c_str(), &rx, 1, &tx, 1, rte_socket_id());
    if (id < 0) throw std::runtime_error("cannot make ring device " + name);
    return static_cast<uint16_t>(id);
  }

  std::array<rte_ring*, 4> rings_{};
  std::array<uint16_t, 2> ids_{};
  // Made once the rings are (the reader in each keeps a reference to its own pattern).
  std::optional<ReorderingDirection> a_to_b_;
  std::optional<ReorderingDirection> b_to_a_;
  std::thread thread_;
  std::atomic<bool> stopping_{false};
};

// What the capture of one port shows of the sprayed entropy.
struct EntropySeen {
  uint64_t data_frames = 0;
  uint64_t unreadable = 0;  // not RoCE, or a bad ICRC
  // Frames whose source port differs from the one their connection's earlier frames of the same
  // PSN step (PSN / every, modulo values) carried.
  uint64_t inconsistent = 0;
  size_t most_ports_of_one_connection = 0;
};

EntropySeen read_entropy(const fs::path& capture) {
  char error[PCAP_ERRBUF_SIZE] = {};
  pcap_t* file = pcap_open_offline(capture.c_str(), error);
  if (file == nullptr) throw std::runtime_error(capture.string() + ": " + error);
  const frame::PayloadPattern pattern(4096, 4096);
  frame::FrameReader reader(pattern);
  EntropySeen seen;
  // By connection (destination address and QP number): the source port of each PSN step.
  std::map<std::pair<uint32_t, uint32_t>, std::map<uint32_t, uint16_t>> ports;
  pcap_pkthdr* header = nullptr;
  const u_char* bytes = nullptr;
  while (pcap_next_ex(file, &header, &bytes) == 1) {
    if (header->caplen <= kDataFrameBytes) continue;
    frame::ParsedFrame parsed;
    if (reader.parse(bytes, header->caplen, parsed) != frame::FrameStatus::kRoce) {
      ++seen.unreadable;
      continue;
    }
    ++seen.data_frames;
    const auto& ip = parsed.addresses.dst_ip;
    const uint32_t address = (uint32_t{ip[0]} << 24) | (ip[1] << 16) | (ip[2] << 8) | ip[3];
    auto& steps = ports[{address, parsed.packet.dest_qpn}];
    const uint32_t step = (parsed.packet.psn / kSprayEvery) % kSprayValues;
    const auto [it, first] = steps.emplace(step, parsed.packet.udp_source_port);
    if (!first && it->second != parsed.packet.udp_source_port) ++seen.inconsistent;
  }
  pcap_close(file);
  for (const auto& [connection, steps] : ports) {
    std::set<uint16_t> distinct;
    for (const auto& [step, port] : steps) distinct.insert(port);
    seen.most_ports_of_one_connection =
        std::max(seen.most_ports_of_one_connection, distinct.size());
    // Each step has its own port.
    if (distinct.size() != steps.size()) ++seen.inconsistent;
  }
  return seen;
}

struct DeviceRun {
  engine::RunResults results;
  std::vector<transport::FlowRecord> flows;
  uint64_t overtaken = 0;
  uint64_t lost = 0;
  EntropySeen entropy;
};

class ReorderingDeviceTest : public AllToAllSuite<1 << 20> {
 protected:
  // Ranks 0-3 on port a, 4-7 on port b. The retransmit timeout is long enough that no pause of a
  // busy machine fires it: what is resent here was asked for.
  std::string config_text(const std::string& receiver, uint16_t a, uint16_t b) const {
    return fmt::format(R"(run: {{name: reorder, seed: 1, watchdog: 30s}}
workload:
  jobs:
    - {{name: a2a, trace: {}}}
dpdk:
  eal_args: {}
  mbufs: 4095
transport:
  receiver: {}
  retransmit_timeout: 4s
  entropy: {{mode: spray, every: {}, values: {}}}
ports:
  - {{name: a, backend: dpdk, speed: 25Gbps, mtu: 4200, dpdk: {{port_id: {}}}}}
  - {{name: b, backend: dpdk, speed: 25Gbps, mtu: 4200, dpdk: {{port_id: {}}}}}
mapping:
  jobs:
    - {{job: a2a, placement: block, ranks_per_port: 4,
       hosts: {{ranks_per_host: 4, bandwidth: 100GBps}}}}
telemetry:
  metrics: {{listen: "127.0.0.1:0"}}
  record: {{pcap: true}}
)",
                       trace_, kShellEalArgs, receiver, kSprayEvery, kSprayValues, a, b);
  }

  control::RunPlan load(const std::string& receiver, uint16_t a, uint16_t b) {
    auto loaded = control::load_config_text(config_text(receiver, a, b),
                                            (dir_ / "reorder.yaml").string(), dir_.string());
    EXPECT_TRUE(loaded.ok()) << loaded.diagnostics.to_text();
    return loaded;
  }

  // Skips the test when DPDK cannot start here.
  std::optional<DeviceRun> run_through_device(const std::string& receiver) {
    try {
      nic::dpdk::start_eal(eal_arguments(load(receiver, 0, 1).config));
    } catch (const std::runtime_error& e) {
      skip_reason_ = e.what();
      return std::nullopt;
    }
    ReorderingDevice device;
    auto loaded = load(receiver, device.port_id(0), device.port_id(1));
    const fs::path out = dir_ / receiver;
    Collect sink;
    engine::RunOptions options;
    options.flows = &sink;
    options.data_plane = [](const config::RunConfig& c, transport::FlowObserver& observer) {
      return std::make_unique<DpdkDataPlane>(c, observer);
    };
    DeviceRun run;
    {
      engine::RunEngine engine(loaded, options);
      engine.capture_frames(out.string());
      device.start();
      run.results = engine.run();
      // Before the ports and their pools go: the device reads the frames it moves.
      device.stop();
    }
    run.flows = std::move(sink.records);
    run.overtaken = device.overtaken();
    run.lost = device.lost();
    run.entropy = read_entropy(out / "capture" / "a.pcapng");
    return run;
  }

  static void expect_every_flow_completed(const DeviceRun& run) {
    std::cout << fmt::format(
        "{} flows, {} packets overtaken, {} reordered, {} resent, {} data frames captured on a\n",
        run.flows.size(), run.overtaken, sum(run, &PortCounters::reordered_packets),
        sum(run, &PortCounters::retransmitted_packets), run.entropy.data_frames);
    ASSERT_EQ(run.results.status, engine::RunStatus::kCompleted) << run.results.diagnosis;
    EXPECT_EQ(run.results.failed_flows, 0u);
    EXPECT_FALSE(run.flows.empty());
    for (const auto& f : run.flows) EXPECT_EQ(f.status, transport::FlowStatus::kCompleted);
    EXPECT_EQ(run.lost, 0u);
    // The device overtook packets of a connection by one of its own, in both runs alike.
    EXPECT_GT(run.overtaken, 20u);
  }

  static void expect_sprayed_entropy(const DeviceRun& run) {
    EXPECT_GT(run.entropy.data_frames, 100u);
    EXPECT_EQ(run.entropy.unreadable, 0u);
    EXPECT_EQ(run.entropy.inconsistent, 0u);
    EXPECT_EQ(run.entropy.most_ports_of_one_connection, kSprayValues);
  }

  static uint64_t sum(const DeviceRun& run, uint64_t PortCounters::*counter) {
    uint64_t total = 0;
    for (const PortRecord& port : run.results.ports) total += port.*counter;
    return total;
  }

  std::string skip_reason_;
};

TEST_F(ReorderingDeviceTest, AnOutOfOrderReceiverPlacesOvertakenPacketsWithoutResending) {
  const auto run = run_through_device("out-of-order");
  if (!run) GTEST_SKIP() << "DPDK cannot start here: " << skip_reason_;
  expect_every_flow_completed(*run);
  expect_sprayed_entropy(*run);
  EXPECT_EQ(sum(*run, &PortCounters::retransmitted_packets), 0u);
  EXPECT_EQ(sum(*run, &PortCounters::timeouts), 0u);
  EXPECT_EQ(sum(*run, &PortCounters::missing_packets), 0u);
  // Each overtaken packet arrived behind the one that overtook it, which is counted.
  EXPECT_EQ(sum(*run, &PortCounters::reordered_packets), run->overtaken);
  EXPECT_GT(sum(*run, &PortCounters::sprayed_packets), 0u);
}

TEST_F(ReorderingDeviceTest, AGoBackNReceiverMakesTheSenderResend) {
  const auto run = run_through_device("go-back-n");
  if (!run) GTEST_SKIP() << "DPDK cannot start here: " << skip_reason_;
  expect_every_flow_completed(*run);
  expect_sprayed_entropy(*run);
  EXPECT_GT(sum(*run, &PortCounters::retransmitted_packets), 0u);
  EXPECT_EQ(sum(*run, &PortCounters::timeouts), 0u);
}

}  // namespace
}  // namespace etwire::dataplane

// The data plane in virtual time: an all-to-all over the fabric twin, measuring how many
// scheduler events per second one core processes and how much state each flow in progress costs.
//
//   bench_dataplane [--ranks N] [--bytes PER_RANK] [--ports-per-leaf P] [--spines S]
//
// Defaults: 64 ranks (one per 100G port), 64 MiB per rank (each rank sends 1 MiB to each
// other rank at once), leaf-spine with 8 ports per leaf and 4 spines, NVIDIA DCQCN defaults.
#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "clock/virtual_clock.h"
#include "config/fabric_config.h"
#include "config/transport_config.h"
#include "nic/loopback/fabric_twin.h"
#include "transport/transport.h"

namespace {

using namespace etwire;

struct Options {
  uint32_t ranks = 64;
  uint64_t bytes_per_rank = 64ull << 20;
  uint32_t ports_per_leaf = 8;
  uint32_t spines = 4;
};

Options parse(int argc, char** argv) {
  Options options;
  for (int i = 1; i < argc; ++i) {
    const std::string flag = argv[i];
    if (flag == "--help" || flag == "-h") {
      std::puts("bench_dataplane [--ranks N] [--bytes PER_RANK] [--ports-per-leaf P] [--spines S]");
      std::exit(0);
    }
    if (i + 1 >= argc) {
      std::fprintf(stderr, "bench_dataplane: %s needs a value\n", flag.c_str());
      std::exit(2);
    }
    const uint64_t value = std::strtoull(argv[++i], nullptr, 10);
    if (flag == "--ranks") {
      options.ranks = static_cast<uint32_t>(value);
    } else if (flag == "--bytes") {
      options.bytes_per_rank = value;
    } else if (flag == "--ports-per-leaf") {
      options.ports_per_leaf = static_cast<uint32_t>(value);
    } else if (flag == "--spines") {
      options.spines = static_cast<uint32_t>(value);
    } else {
      std::fprintf(stderr, "bench_dataplane: unknown flag %s\n", flag.c_str());
      std::exit(2);
    }
  }
  return options;
}

// Counts completions and tracks the most flows in progress at once.
struct Tally final : transport::FlowObserver {
  void on_flow_delivered(const transport::FlowRecord&) override {}
  void on_flow_finished(const transport::FlowRecord& record) override {
    ++finished;
    if (record.status != transport::FlowStatus::kCompleted) ++failed;
    last_finish = record.finished_at;
  }
  uint64_t finished = 0;
  uint64_t failed = 0;
  clock::Nanos last_finish = 0;
};

long peak_rss_kb() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return usage.ru_maxrss;
}

}  // namespace

int main(int argc, char** argv) {
  const Options options = parse(argc, argv);
  constexpr uint64_t kSpeed = 100'000'000'000;

  config::FabricConfig fabric;
  fabric.topology = config::Topology::kLeafSpine;
  fabric.leaf_spine.ports_per_leaf = options.ports_per_leaf;
  fabric.leaf_spine.spines = options.spines;
  std::vector<nic::loopback::TwinPortSpec> specs;
  for (uint32_t i = 0; i < options.ranks; ++i) {
    std::string name = "p";
    name += std::to_string(i);
    specs.push_back({name, kSpeed});
  }
  config::TransportConfig config;

  clock::VirtualClock clock;
  nic::loopback::FabricTwin twin(fabric, specs, clock, 1);
  Tally tally;
  transport::Transport transport(config, clock, tally);
  for (uint32_t i = 0; i < options.ranks; ++i) transport.add_port(twin.port(i), {}, {});

  const uint64_t per_peer = options.bytes_per_rank / options.ranks;
  const long rss_before = peak_rss_kb();
  const auto start = std::chrono::steady_clock::now();
  uint32_t flows = 0;
  for (uint32_t src = 0; src < options.ranks; ++src) {
    for (uint32_t dst = 0; dst < options.ranks; ++dst) {
      if (src == dst) continue;
      const auto connection =
          transport.connect(src, dst, static_cast<uint16_t>(49152 + (src * 131 + dst) % 16384));
      transport.post(connection, per_peer, {});
      ++flows;
    }
  }
  const uint32_t peak_flows = transport.flows_in_progress();
  size_t peak_pending = 0;
  while (!clock.idle()) {
    peak_pending = std::max(peak_pending, clock.pending());
    clock.poll();
  }
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();

  uint64_t data_packets = 0;
  uint64_t retransmits = 0;
  uint64_t cnps = 0;
  for (uint32_t i = 0; i < options.ranks; ++i) {
    data_packets += transport.port_counters(i).data_packets;
    retransmits += transport.port_counters(i).retransmitted_packets;
    cnps += transport.port_counters(i).cnps_received;
  }
  const uint64_t events = clock.events_run();
  const size_t per_flow =
      transport::Transport::connection_state_bytes() + transport::Transport::flow_state_bytes();

  std::printf(
      "ranks %u, %llu bytes per rank, %u flows of %llu bytes, leaf-spine %u ports/leaf, "
      "%u spines, uplinks %.0f Gb/s\n",
      options.ranks, static_cast<unsigned long long>(options.bytes_per_rank), flows,
      static_cast<unsigned long long>(per_peer), options.ports_per_leaf, options.spines,
      static_cast<double>(twin.layout().uplink_speed_bps()) / 1e9);
  std::printf("flows finished %llu (failed %llu), virtual time %.3f ms\n",
              static_cast<unsigned long long>(tally.finished),
              static_cast<unsigned long long>(tally.failed),
              static_cast<double>(tally.last_finish) / 1e6);
  std::printf("data packets %llu, retransmitted %llu, CNPs %llu\n",
              static_cast<unsigned long long>(data_packets),
              static_cast<unsigned long long>(retransmits), static_cast<unsigned long long>(cnps));
  std::printf("events %llu in %.3f s: %.2f M events/s, %.2f M data packets/s\n",
              static_cast<unsigned long long>(events), seconds,
              static_cast<double>(events) / seconds / 1e6,
              static_cast<double>(data_packets) / seconds / 1e6);
  std::printf(
      "transport state per flow in progress: %zu bytes (connection %zu + flow %zu); "
      "peak flows in progress %u\n",
      per_flow, transport::Transport::connection_state_bytes(),
      transport::Transport::flow_state_bytes(), peak_flows);
  std::printf("peak events pending %zu\n", peak_pending);
  std::printf("peak RSS %.1f MB (%.1f MB before posting)\n",
              static_cast<double>(peak_rss_kb()) / 1024, static_cast<double>(rss_before) / 1024);
  return tally.failed == 0 && tally.finished == flows ? 0 : 1;
}

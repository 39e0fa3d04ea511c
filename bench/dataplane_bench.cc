// The data plane in virtual time: an all-to-all over the fabric twin, measuring how many
// scheduler events per second one core processes and how much state each flow in progress costs.
//
//   bench_dataplane [--ranks N] [--bytes PER_RANK] [--speed GBPS] [--ports-per-leaf P]
//                   [--spines S] [--links K] [--topology leaf-spine|three-tier]
//                   [--leaves-per-pod L] [--super-spines G] [--super-links K2]
//                   [--order ascending|shifted] [--peers N] [--retransmission adaptive|fixed]
//                   [--partitions P [--threads T]] [--load-balancing MODE]
//                   [--receiver go-back-n|out-of-order]
//
// Defaults: 64 ranks (one per 100G port), 64 MiB per rank (each rank sends 1 MiB to each
// other rank at once), leaf-spine with 8 ports per leaf and 4 spines, NVIDIA DCQCN defaults.
// Inner links run at the speeds that make every tier 1:1. With --topology three-tier, every L
// consecutive leaves (default 8) are a pod with S spines of its own, and each spine has G
// super-spines (default 4) in its group; the share of flows between pods, which cross the
// super-spines, is printed.
// The order in which each rank posts its messages is the order its port takes turns between them:
// ascending (the default) has every rank post to rank 0, 1, 2..., so that at the start all ranks
// send to the same rank at once; shifted has rank r post to r+1, r+2... (the pairwise exchange
// order of all-to-all implementations), so that at each turn the ranks send to distinct ranks.
// --peers N (default ranks - 1, all of them) has each rank send to only N peers, spread evenly over
// the ranks: r + k x floor(ranks / (N + 1)) for k = 1..N, bytes per rank / (N + 1) to each.
// --partitions P runs the twin in P partitions of its leaves (parallel virtual time,
// twin/partition/partitioned_twin.h), each with a transport of its own, on T threads (default 1);
// the digest it prints covers every flow's end and must be the same for every T.
// --load-balancing ecmp|spray|flowlet|adaptive puts every tier's switches in that mode
// (fabric.load_balancing; spray at random); --receiver go-back-n|out-of-order sets
// transport.receiver.
#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "clock/virtual_clock.h"
#include "config/enum_names.h"
#include "config/fabric_config.h"
#include "config/transport_config.h"
#include "transport/transport.h"
#include "twin/fabric/fabric_twin.h"
#include "twin/partition/partitioned_twin.h"

namespace {

using namespace etwire;

struct Options {
  uint32_t ranks = 64;
  uint64_t bytes_per_rank = 64ull << 20;
  uint64_t speed_gbps = 100;
  uint32_t ports_per_leaf = 8;
  uint32_t spines = 4;
  uint32_t links = 1;
  config::Topology topology = config::Topology::kLeafSpine;
  uint32_t leaves_per_pod = 8;
  uint32_t super_spines = 4;
  uint32_t super_links = 1;
  bool shifted = false;
  uint32_t peers = 0;  // 0: every other rank
  config::Retransmission retransmission = config::TransportConfig{}.retransmission;
  uint32_t partitions = 0;  // 0: the whole twin on one clock
  uint32_t threads = 1;
  config::LoadBalancing load_balancing = config::LoadBalancing::kEcmp;
  config::Receiver receiver = config::Receiver::kGoBackN;
};

constexpr const char* kUsage =
    "bench_dataplane [--ranks N] [--bytes PER_RANK] [--speed GBPS] [--ports-per-leaf P]\n"
    "                [--spines S] [--links K] [--topology leaf-spine|three-tier]\n"
    "                [--leaves-per-pod L] [--super-spines G] [--super-links K2]\n"
    "                [--order ascending|shifted] [--peers N] [--retransmission adaptive|fixed]\n"
    "                [--partitions P [--threads T]] [--load-balancing MODE]\n"
    "                [--receiver go-back-n|out-of-order]";

// The value a flag's argument names in the configuration's spellings; exits on any other.
template <class E>
E named(config::NameTable<E> table, const std::string& flag, const std::string& name) {
  for (const config::NamedValue<E>& entry : table) {
    if (entry.name == name) return entry.value;
  }
  std::fprintf(stderr, "bench_dataplane: %s takes no %s\n", flag.c_str(), name.c_str());
  std::exit(2);
}

Options parse(int argc, char** argv) {
  Options options;
  for (int i = 1; i < argc; ++i) {
    const std::string flag = argv[i];
    if (flag == "--help" || flag == "-h") {
      std::puts(kUsage);
      std::exit(0);
    }
    if (i + 1 >= argc) {
      std::fprintf(stderr, "bench_dataplane: %s needs a value\n", flag.c_str());
      std::exit(2);
    }
    if (flag == "--topology") {
      const std::string name = argv[++i];
      if (name == "leaf-spine") {
        options.topology = config::Topology::kLeafSpine;
      } else if (name == "three-tier") {
        options.topology = config::Topology::kThreeTier;
      } else {
        std::fprintf(stderr, "bench_dataplane: unknown topology %s\n", name.c_str());
        std::exit(2);
      }
      continue;
    }
    if (flag == "--order") {
      const std::string name = argv[++i];
      if (name != "ascending" && name != "shifted") {
        std::fprintf(stderr, "bench_dataplane: unknown order %s\n", name.c_str());
        std::exit(2);
      }
      options.shifted = name == "shifted";
      continue;
    }
    if (flag == "--retransmission") {
      const std::string name = argv[++i];
      if (name != "adaptive" && name != "fixed") {
        std::fprintf(stderr, "bench_dataplane: unknown retransmission %s\n", name.c_str());
        std::exit(2);
      }
      options.retransmission =
          name == "fixed" ? config::Retransmission::kFixed : config::Retransmission::kAdaptive;
      continue;
    }
    if (flag == "--load-balancing") {
      options.load_balancing = named(config::load_balancing_names(), flag, argv[++i]);
      continue;
    }
    if (flag == "--receiver") {
      options.receiver = named(config::receiver_names(), flag, argv[++i]);
      continue;
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
    } else if (flag == "--speed") {
      options.speed_gbps = value;
    } else if (flag == "--links") {
      options.links = static_cast<uint32_t>(value);
    } else if (flag == "--leaves-per-pod") {
      options.leaves_per_pod = static_cast<uint32_t>(value);
    } else if (flag == "--super-spines") {
      options.super_spines = static_cast<uint32_t>(value);
    } else if (flag == "--super-links") {
      options.super_links = static_cast<uint32_t>(value);
    } else if (flag == "--peers") {
      options.peers = static_cast<uint32_t>(value);
    } else if (flag == "--partitions") {
      options.partitions = static_cast<uint32_t>(value);
    } else if (flag == "--threads") {
      options.threads = static_cast<uint32_t>(value);
    } else {
      std::fprintf(stderr, "bench_dataplane: unknown flag %s\n", flag.c_str());
      std::exit(2);
    }
  }
  if (options.peers == 0 || options.peers >= options.ranks) options.peers = options.ranks - 1;
  return options;
}

// Calls visit(dst) for each rank `src` sends to, in the order it posts to them.
template <typename Visitor>
void for_each_peer(const Options& options, uint32_t src, Visitor&& visit) {
  const uint32_t n = options.ranks;
  const uint32_t stride = n / (options.peers + 1);
  if (options.shifted) {
    for (uint32_t k = 1; k <= options.peers; ++k) visit((src + k * stride) % n);
    return;
  }
  for (uint32_t dst = 0; dst < n; ++dst) {
    const uint32_t offset = (dst + n - src) % n;
    if (offset != 0 && offset % stride == 0 && offset / stride <= options.peers) visit(dst);
  }
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

// A partition's tally, and an FNV-1a digest of how each of its flows ended, in the order they did.
struct PartitionTally final : transport::FlowObserver {
  void on_flow_delivered(const transport::FlowRecord&) override {}
  void on_flow_finished(const transport::FlowRecord& record) override {
    ++finished;
    if (record.status != transport::FlowStatus::kCompleted) ++failed;
    last_finish = std::max(last_finish, record.finished_at);
    for (const uint64_t value : {record.flow_id, static_cast<uint64_t>(record.finished_at),
                                 static_cast<uint64_t>(record.status)}) {
      digest = (digest ^ value) * 1099511628211ull;
    }
  }
  uint64_t finished = 0;
  uint64_t failed = 0;
  clock::Nanos last_finish = 0;
  uint64_t digest = 14695981039346656037ull;
};

long peak_rss_kb() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return usage.ru_maxrss;
}

// The all-to-all on a twin cut into `options.partitions` partitions, run on `options.threads`.
int run_partitioned(const Options& options, const config::FabricConfig& fabric,
                    const std::vector<twin::TwinPortSpec>& specs,
                    const config::TransportConfig& config) {
  twin::PartitionedTwin twin(fabric, specs, 1, options.partitions);
  std::vector<std::unique_ptr<PartitionTally>> tallies;
  std::vector<std::unique_ptr<transport::Transport>> transports;
  for (uint32_t p = 0; p < options.partitions; ++p) {
    tallies.push_back(std::make_unique<PartitionTally>());
    transports.push_back(
        std::make_unique<transport::Transport>(config, twin.clock(p), *tallies.back()));
  }
  std::vector<uint32_t> local(options.ranks);
  for (uint32_t i = 0; i < options.ranks; ++i) {
    local[i] = transports[twin.partition_of_host(i)]->add_port(twin.port(i), {}, {}, i);
  }
  const uint64_t per_peer = options.bytes_per_rank / (options.peers + 1);
  const auto start = std::chrono::steady_clock::now();
  uint32_t flows = 0;
  for (uint32_t src = 0; src < options.ranks; ++src) {
    for_each_peer(options, src, [&](uint32_t dst) {
      const auto udp = static_cast<uint16_t>(49152 + (src * 131 + dst) % 16384);
      const uint32_t qpn = ++flows;
      transports[twin.partition_of_host(src)]->open_requester(local[src], qpn, dst, qpn, udp);
      transports[twin.partition_of_host(dst)]->open_responder(local[dst], qpn, src, qpn, udp);
      transports[twin.partition_of_host(src)]->post(qpn, per_peer, {});
    });
  }
  twin.run(options.threads);
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  uint64_t finished = 0;
  uint64_t failed = 0;
  clock::Nanos last_finish = 0;
  uint64_t digest = 0;
  for (const auto& tally : tallies) {
    finished += tally->finished;
    failed += tally->failed;
    last_finish = std::max(last_finish, tally->last_finish);
    digest = digest * 31 + tally->digest;
  }
  uint64_t data_packets = 0;
  for (uint32_t i = 0; i < options.ranks; ++i) {
    data_packets += transports[twin.partition_of_host(i)]->port_counters(local[i]).data_packets;
  }
  const uint64_t events = twin.events_run();
  std::printf(
      "ranks %u, %u flows of %llu bytes, %u partitions on %u thread(s), lookahead %lld ns\n",
      options.ranks, flows, static_cast<unsigned long long>(per_peer), options.partitions,
      std::min(options.threads, options.partitions), static_cast<long long>(twin.lookahead()));
  std::printf("flows finished %llu (failed %llu), virtual time %.3f ms, digest %016llx\n",
              static_cast<unsigned long long>(finished), static_cast<unsigned long long>(failed),
              static_cast<double>(last_finish) / 1e6, static_cast<unsigned long long>(digest));
  std::printf("events %llu in %.3f s: %.2f M events/s, %.2f M data packets/s, %llu windows\n",
              static_cast<unsigned long long>(events), seconds,
              static_cast<double>(events) / seconds / 1e6,
              static_cast<double>(data_packets) / seconds / 1e6,
              static_cast<unsigned long long>(twin.windows_run()));
  std::printf("peak RSS %.1f MB\n", static_cast<double>(peak_rss_kb()) / 1024.0);
  return failed == 0 ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  const Options options = parse(argc, argv);
  const uint64_t speed = options.speed_gbps * 1'000'000'000;
  const bool three_tier = options.topology == config::Topology::kThreeTier;

  config::FabricConfig fabric;
  fabric.topology = options.topology;
  fabric.leaf_spine.ports_per_leaf = options.ports_per_leaf;
  fabric.leaf_spine.spines = options.spines;
  fabric.leaf_spine.links = options.links;
  fabric.load_balancing.leaf = fabric.load_balancing.spine = fabric.load_balancing.super_spine =
      options.load_balancing;
  if (three_tier) {
    fabric.three_tier.leaves_per_pod = options.leaves_per_pod;
    fabric.three_tier.super_spines = options.super_spines;
    fabric.three_tier.links = options.super_links;
  }
  std::vector<twin::TwinPortSpec> specs;
  for (uint32_t i = 0; i < options.ranks; ++i) {
    std::string name = "p";
    name += std::to_string(i);
    specs.push_back({name, speed});
  }
  config::TransportConfig config;
  config.retransmission = options.retransmission;
  config.receiver = options.receiver;
  if (options.partitions > 0) return run_partitioned(options, fabric, specs, config);

  clock::VirtualClock clock;
  twin::FabricTwin twin(fabric, specs, clock, 1);
  const twin::FabricLayout& layout = twin.layout();
  // Flows whose path crosses the super-spines (5 switches); all flows carry the same bytes.
  uint64_t between_pods = 0;
  for (uint32_t src = 0; src < options.ranks; ++src) {
    for_each_peer(options, src, [&](uint32_t dst) {
      if (layout.switches_between(src, dst) == 5) ++between_pods;
    });
  }
  Tally tally;
  transport::Transport transport(config, clock, tally);
  for (uint32_t i = 0; i < options.ranks; ++i) transport.add_port(twin.port(i), {}, {});

  const uint64_t per_peer = options.bytes_per_rank / (options.peers + 1);
  const long rss_before = peak_rss_kb();
  const auto start = std::chrono::steady_clock::now();
  uint32_t flows = 0;
  for (uint32_t src = 0; src < options.ranks; ++src) {
    for_each_peer(options, src, [&](uint32_t dst) {
      const auto connection =
          transport.connect(src, dst, static_cast<uint16_t>(49152 + (src * 131 + dst) % 16384));
      transport.post(connection, per_peer, {});
      ++flows;
    });
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

  if (!three_tier) {
    std::printf(
        "ranks %u, %llu bytes per rank, %u flows of %llu bytes, leaf-spine %u ports/leaf, "
        "%u spines, uplinks %.0f Gb/s\n",
        options.ranks, static_cast<unsigned long long>(options.bytes_per_rank), flows,
        static_cast<unsigned long long>(per_peer), options.ports_per_leaf, options.spines,
        static_cast<double>(layout.uplink_speed_bps()) / 1e9);
    if (options.speed_gbps != 100 || options.links != 1) {
      std::printf("ports %llu Gb/s, %zu leaves, %zu links per leaf-spine pair\n",
                  static_cast<unsigned long long>(options.speed_gbps), layout.leaves(),
                  layout.links());
    }
  } else {
    std::printf(
        "ranks %u at %llu Gb/s, %llu bytes per rank, %u flows of %llu bytes, three-tier: %zu "
        "leaves of %u ports in %zu pods, %zu spines per pod (x%zu links of %.0f Gb/s), %zu "
        "super-spines per group (x%zu links of %.0f Gb/s)\n",
        options.ranks, static_cast<unsigned long long>(options.speed_gbps),
        static_cast<unsigned long long>(options.bytes_per_rank), flows,
        static_cast<unsigned long long>(per_peer), layout.leaves(), options.ports_per_leaf,
        layout.pods(), layout.spines(), layout.links(),
        static_cast<double>(layout.uplink_speed_bps()) / 1e9, layout.super_spines(),
        layout.super_links(), static_cast<double>(layout.spine_uplink_speed_bps()) / 1e9);
    std::printf("flows between pods (through super-spines) %llu of %u (%.1f %%)\n",
                static_cast<unsigned long long>(between_pods), flows,
                100.0 * static_cast<double>(between_pods) / flows);
  }
  std::printf("twin: %zu switches, %zu switch ports, %zu cables\n", layout.switches(),
              layout.switch_ports(), layout.cables());
  std::printf("flows finished %llu (failed %llu), virtual time %.3f ms\n",
              static_cast<unsigned long long>(tally.finished),
              static_cast<unsigned long long>(tally.failed),
              static_cast<double>(tally.last_finish) / 1e6);
  std::printf("data packets %llu, retransmitted %llu (retransmission %s), CNPs %llu\n",
              static_cast<unsigned long long>(data_packets),
              static_cast<unsigned long long>(retransmits),
              std::string(config::retransmission_name(config.retransmission)).c_str(),
              static_cast<unsigned long long>(cnps));
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

#include "collectives/tuner.h"

#include <algorithm>
#include <bit>
#include <cmath>

#include "collectives/hosts.h"

namespace etwire::collectives {

namespace {

using config::Protocol;
using trace::CollectiveType;

// The tables below are by protocol in NCCL's order, LL, LL128, Simple (its ties keep the first).
constexpr std::array<Protocol, config::kProtocolCount> kNcclOrder{Protocol::kLl, Protocol::kLl128,
                                                                  Protocol::kSimple};

// Per protocol, in microseconds: NCCL 2.23's figures.
using PerProtocol = std::array<double, config::kProtocolCount>;
constexpr PerProtocol kRingBase{6.6, 14.0, 8.4};
constexpr PerProtocol kTreeBase{6.8, 14.0, 8.4};
constexpr PerProtocol kRingNvlinkHop{0.6, 1.9, 3.4};
constexpr PerProtocol kTreeNvlinkHop{0.6, 1.25, 4.0};
constexpr PerProtocol kRingNetHop{2.7, 4.0, 14.0};
constexpr PerProtocol kTreeNetHop{5.0, 8.5, 14.0};
// NVLS on the NVSwitch, and an NVLS-tree's network hop; PAT's base and per-rank latency.
constexpr double kNvlsNvlinkHop = 25.0;
constexpr double kNvlsTreeNetHop = 14.0;
constexpr double kPatBase = 8.0;
constexpr double kPatPerRank = 2.8;
// The host's cost of a network step (x86), three times that for Simple's flush.
constexpr double kNetOverhead = 1.0;
// Caps in GB/s: LL's bandwidth on one server and on several (x86 hosts), LL128's per channel on a
// ring and a tree, a tree's per channel by servers (1, 2, 4 and more).
constexpr double kLlMaxOneServer = 141.0;
constexpr double kLlMaxServers = 39.0;
constexpr double kRingLl128PerChannel = 36.7;
constexpr std::array<double, 3> kTreeLl128PerChannel{36.7, 36.7, 29.0};
constexpr std::array<double, 3> kTreePerChannel{38.7, 41.4, 36.0};
// A tree's efficiency by size, index log2(bytes / 64) up to 22 (256 MiB).
constexpr std::array<std::array<double, 23>, config::kProtocolCount> kTreeBySize{{
    {1, 1, 1, 1, .9, .8, .7, .7, .7, .7, .6, .5, .4, .4, .5, .6, .7, .8, .9, 1, 1, 1, 1},
    {1, 1, 1, 1, 1, .9, .8, .8, .8, .7, .6, .6, .6, .6, .6, .6, .8, .9, .9, .9, .9, 1, 1},
    {.9, .9, .9, .9, .9, .9, .9, .8, .7, .6, .6, .5, .5, .5, .5, .6, .7, .8, .7, .7, .8, .9, .9},
}};

// The group's shape with the candidate's channels.
struct Shape {
  uint32_t ranks;
  uint32_t per_server;
  uint32_t servers;
  uint32_t channels;
};

size_t server_index(uint32_t servers) {
  return servers >= 4 ? 2 : servers - 1;
}

// A network hop: with one rank per server every step is exposed, and NCCL charges the tree's.
double net_hop(const PerProtocol& hops, const Shape& s, size_t p) {
  return s.per_server == 1 ? kTreeNetHop[p] : hops[p];
}

// The bandwidth of the NICs a collective's channels leave a server by, in GB/s: as many as it
// has channels, at most one per rank on the server.
double nic_bandwidth(const Shape& s, const TunerLinks& links) {
  return links.nic_bytes_per_second / 1e9 * std::min(s.channels, s.per_server);
}

// Ring: steps inside a server cost a hop there (or the host's network overhead), steps between
// servers a network hop. All-reduce crosses 2 (servers - 1) times, the others servers - 1.
double ring_latency(CollectiveType type, const Shape& s, size_t p, uint32_t steps, double bytes) {
  const uint32_t crossings =
      std::min(steps, type == CollectiveType::kAllReduce ? 2 * (s.servers - 1) : s.servers - 1);
  const double overhead = s.servers > 1 ? kNetOverhead * (p == 2 ? 3 : 1) : 0;
  double latency = kRingBase[p] + (steps - crossings) * std::max(kRingNvlinkHop[p], overhead) +
                   crossings * net_hop(kRingNetHop, s, p);
  // Simple's all-reduce across servers: a plateau once each channel's share is not tiny.
  if (type == CollectiveType::kAllReduce && p == 2 && s.servers > 1 &&
      bytes / (s.channels * s.ranks) >= 64) {
    latency *= 1.4;
  }
  return latency;
}

// Bus bandwidth in GB/s of ring protocol p: the channels' NICs, or the host's interconnect on
// one server (the tree's likewise).
double ring_bus_bandwidth(const Shape& s, const TunerLinks& links, size_t p) {
  const double bus = s.servers > 1 ? nic_bandwidth(s, links) : links.host_bytes_per_second / 1e9;
  if (p == 0) return std::min(bus * 0.5, s.servers > 1 ? kLlMaxServers : kLlMaxOneServer);
  if (p == 1) return std::min(bus * 0.92, s.channels * kRingLl128PerChannel);
  return bus;
}

double tree_bus_bandwidth(const Shape& s, const TunerLinks& links, size_t p, double bytes) {
  const size_t index = server_index(s.servers);
  const double links_bus =
      s.servers > 1 ? nic_bandwidth(s, links) : links.host_bytes_per_second / 1e9;
  double bus = std::min(links_bus * 0.92, s.channels * kTreePerChannel[index]);
  if (p == 0) bus = std::min(bus / 3.8, s.servers > 1 ? kLlMaxServers : kLlMaxOneServer);
  if (p == 1) {
    bus = std::min(bus * (s.servers == 1 ? 7.0 / 9 : 120.0 / 128),
                   s.channels * kTreeLl128PerChannel[index]);
  }
  const auto size_index = static_cast<size_t>(
      std::bit_width(std::max<uint64_t>(static_cast<uint64_t>(bytes) >> 6, 1)) - 1);
  if (size_index < kTreeBySize[p].size()) bus *= kTreeBySize[p][size_index];
  return bus;
}

double log2_servers(const Shape& s) {
  return std::floor(std::log2(static_cast<double>(s.servers)));
}

double tree_latency(const Shape& s, size_t p) {
  return kTreeBase[p] + 2 * ((s.per_server - 1) * kTreeNvlinkHop[p] +
                             log2_servers(s) * net_hop(kTreeNetHop, s, p));
}

// Latency and bus bandwidth (GB/s) of one algorithm and protocol; a bandwidth of 0: NCCL would not
// run it here.
struct Cost {
  double latency = 0;
  double bus = 0;
  double ratio = 1;  // algbw / busbw
};

Cost ring_cost(CollectiveType type, const Shape& s, const TunerLinks& links, size_t p,
               double bytes) {
  const uint32_t steps = type == CollectiveType::kAllReduce ? 2 * (s.ranks - 1) : s.ranks - 1;
  return {ring_latency(type, s, p, steps, bytes), ring_bus_bandwidth(s, links, p),
          static_cast<double>(s.ranks) / steps};
}

// NVLS: the NVSwitch reduces, each rank pulling its share; one server only (across servers NCCL
// needs CollNet beside it). NVLS-tree: the same in each server, a tree between them over every
// rank's NIC (half of it past two servers). Simple only.
Cost nvls_cost(Algorithm algorithm, const Shape& s, const TunerLinks& links) {
  const bool tree = algorithm == Algorithm::kNvlsTree;
  if (s.per_server < 2 || (tree ? s.servers < 2 : s.servers > 1)) return {};
  double bus = links.host_bytes_per_second / 1e9;
  if (tree) {
    bus = std::min(bus,
                   links.nic_bytes_per_second / 1e9 * s.per_server * (s.servers <= 2 ? 1.0 : 0.5));
  }
  return {kNvlsNvlinkHop + (tree ? 2 * log2_servers(s) * kNvlsTreeNetHop : 0), bus, 5.0 / 6};
}

// PAT: one rank per server only, Simple, the tree's channels at 85 %.
Cost pat_cost(const Shape& s, const TunerLinks& links) {
  if (s.per_server != 1) return {};
  return {kPatBase + log2_servers(s) * kTreeNetHop[2] / 3.5 + kPatPerRank * s.ranks,
          links.nic_bytes_per_second / 1e9 * 0.85, 1};
}

bool runs_every_protocol(Algorithm algorithm) {
  return algorithm == Algorithm::kRing || algorithm == Algorithm::kTree;
}

Cost cost_of(CollectiveType type, Algorithm algorithm, const Shape& s, const TunerLinks& links,
             size_t p, double bytes) {
  switch (algorithm) {
    case Algorithm::kRing:
      return ring_cost(type, s, links, p, bytes);
    case Algorithm::kTree:
      return {tree_latency(s, p), tree_bus_bandwidth(s, links, p, bytes), 0.5};
    case Algorithm::kNvls:
    case Algorithm::kNvlsTree:
      return nvls_cost(algorithm, s, links);
    case Algorithm::kPat:
      return pat_cost(s, links);
    default:
      return {};
  }
}

constexpr Algorithm kAllReduceAlgorithms[] = {Algorithm::kTree, Algorithm::kRing, Algorithm::kNvls,
                                              Algorithm::kNvlsTree};
constexpr Algorithm kGatherScatterAlgorithms[] = {Algorithm::kRing, Algorithm::kPat};

}  // namespace

std::span<const Algorithm> tuner_algorithms(CollectiveType type) {
  switch (type) {
    case CollectiveType::kAllReduce:
      return kAllReduceAlgorithms;
    case CollectiveType::kAllGather:
    case CollectiveType::kReduceScatter:
    case CollectiveType::kReduceScatterBlock:
      return kGatherScatterAlgorithms;
    default:
      return {};
  }
}

GroupShape group_shape(const CollectiveSpec& spec) {
  const HostGrouping hosts{std::max(spec.ranks_per_host, 1u)};
  GroupShape s;
  s.ranks = static_cast<uint32_t>(spec.ranks.size());
  s.servers = 1;
  for (size_t i = 1; i < spec.ranks.size(); ++i) {
    if (!hosts.same_host(spec.ranks[i], spec.ranks[i - 1])) ++s.servers;
  }
  s.servers = std::min(s.servers, s.ranks);
  s.per_server = s.servers == 0 ? 0 : s.ranks / s.servers;
  return s;
}

ProtocolChoice tune_protocol(const CollectiveSpec& spec, const TunerLinks& links) {
  return tune_protocol(spec, links, group_shape(spec));
}

ProtocolChoice tune_protocol(const CollectiveSpec& spec, const TunerLinks& links,
                             const GroupShape& shape) {
  ProtocolChoice choice;
  if (!spec.collective || spec.ranks.size() < 2) return choice;
  const CollectiveType type = *spec.collective;
  const Algorithm algorithm = spec.algorithm.value_or(default_algorithm(spec.collective));
  const auto candidates = tuner_algorithms(type);
  // NCCL's tree runs all-reduce only; etwire's double binary tree is modelled as one.
  const Algorithm modelled =
      algorithm == Algorithm::kDoubleBinaryTree ? Algorithm::kTree : algorithm;
  if (std::find(candidates.begin(), candidates.end(), modelled) == candidates.end()) return choice;
  Shape s{shape.ranks, shape.per_server, shape.servers, 1};
  s.channels = std::max(spec.channels.value_or(modelled == Algorithm::kTree ? 2 : 1), 1u);
  double bytes = 0;
  try {
    bytes = static_cast<double>(full_buffer_bytes(spec, s.ranks));
  } catch (const SpecError&) {
    return choice;  // generating it reports the overflow
  }
  double best = -1;
  for (size_t p = 0; p < config::kProtocolCount; ++p) {
    if (!runs_every_protocol(modelled) && kNcclOrder[p] != Protocol::kSimple) continue;
    const Cost cost = cost_of(type, modelled, s, links, p, bytes);
    if (cost.bus <= 0) continue;
    const double time = cost.latency + bytes / (1000 * cost.bus * cost.ratio);
    choice.time_us[static_cast<size_t>(kNcclOrder[p])] = time;
    if (best < 0 || time < best) {
      best = time;
      choice.protocol = kNcclOrder[p];
    }
  }
  return choice;
}

}  // namespace etwire::collectives

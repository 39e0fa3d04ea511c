#include "collectives/protocol_tuner.h"

#include <algorithm>
#include <bit>
#include <cmath>

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

// The bytes NCCL's model counts: the whole buffer (an all-gather's output, a reduce-scatter's
// input).
double model_bytes(const CollectiveSpec& spec, uint32_t ranks) {
  const auto bytes = static_cast<double>(spec.bytes);
  const bool input = spec.size_convention == SizeConvention::kInput;
  switch (*spec.collective) {
    case CollectiveType::kAllGather:
      return input ? bytes * ranks : bytes;
    case CollectiveType::kReduceScatter:
    case CollectiveType::kReduceScatterBlock:
      return input ? bytes : bytes * ranks;
    default:
      return bytes;
  }
}

struct Shape {
  uint32_t ranks;
  uint32_t per_server;
  uint32_t servers;
  uint32_t channels;
};

size_t server_index(uint32_t servers) {
  return servers >= 4 ? 2 : servers - 1;
}

// Ring: steps inside a server cost a hop there (or the host's network overhead), steps between
// servers a network hop. All-reduce crosses 2 (servers - 1) times, the others servers - 1.
double ring_latency(CollectiveType type, const Shape& s, size_t p, double bytes) {
  const uint32_t steps = type == CollectiveType::kAllReduce ? 2 * (s.ranks - 1) : s.ranks - 1;
  const uint32_t crossings =
      std::min(steps, type == CollectiveType::kAllReduce ? 2 * (s.servers - 1) : s.servers - 1);
  const double overhead = s.servers > 1 ? kNetOverhead * (p == 2 ? 3 : 1) : 0;
  double latency = kRingBase[p] + (steps - crossings) * std::max(kRingNvlinkHop[p], overhead) +
                   crossings * kRingNetHop[p];
  // Simple's all-reduce across servers: a plateau once each channel's share is not tiny.
  if (type == CollectiveType::kAllReduce && p == 2 && s.servers > 1 &&
      bytes / (s.channels * s.ranks) >= 64) {
    latency *= 1.4;
  }
  return latency;
}

// Bus bandwidth in GB/s of ring protocol p: the channels' NICs (a server's channels leave by
// different NICs, as many as it has ranks), or the host's interconnect on one server.
double ring_bus_bandwidth(const Shape& s, const TunerLinks& links, size_t p) {
  const double bus = s.servers > 1 ? links.nic_bytes_per_second / 1e9 *
                                         std::min(s.channels, std::max(s.per_server, 1u))
                                   : links.host_bytes_per_second / 1e9;
  if (p == 0) return std::min(bus * 0.5, s.servers > 1 ? kLlMaxServers : kLlMaxOneServer);
  if (p == 1) return std::min(bus * 0.92, s.channels * kRingLl128PerChannel);
  return bus;
}

double tree_bus_bandwidth(const Shape& s, const TunerLinks& links, size_t p, double bytes) {
  const size_t index = server_index(s.servers);
  const double nics =
      links.nic_bytes_per_second / 1e9 * std::min(s.channels, std::max(s.per_server, 1u));
  double bus = std::min(nics * 0.92, s.channels * kTreePerChannel[index]);
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

double tree_latency(const Shape& s, size_t p) {
  const double depth = std::floor(std::log2(static_cast<double>(s.servers)));
  return kTreeBase[p] + 2 * ((s.per_server - 1) * kTreeNvlinkHop[p] + depth * kTreeNetHop[p]);
}

}  // namespace

ProtocolChoice tune_protocol(const CollectiveSpec& spec, const TunerLinks& links) {
  ProtocolChoice choice;
  if (!spec.collective || spec.ranks.size() < 2) return choice;
  const CollectiveType type = *spec.collective;
  const Algorithm algorithm = spec.algorithm.value_or(default_algorithm(spec.collective));
  const bool ring =
      algorithm == Algorithm::kRing &&
      (type == CollectiveType::kAllReduce || type == CollectiveType::kAllGather ||
       type == CollectiveType::kReduceScatter || type == CollectiveType::kReduceScatterBlock);
  const bool tree = (algorithm == Algorithm::kTree || algorithm == Algorithm::kDoubleBinaryTree) &&
                    type == CollectiveType::kAllReduce;
  if (!ring && !tree) return choice;  // NCCL's other algorithms run Simple only
  Shape s;
  s.ranks = static_cast<uint32_t>(spec.ranks.size());
  s.per_server = std::clamp(spec.ranks_per_host, 1u, s.ranks);
  s.servers = (s.ranks + s.per_server - 1) / s.per_server;
  s.channels = spec.channels.value_or(tree ? 2 : 1);
  const double bytes = model_bytes(spec, s.ranks);
  double best = -1;
  for (size_t p = 0; p < config::kProtocolCount; ++p) {
    double latency, bus, ratio;
    if (ring) {
      latency = ring_latency(type, s, p, bytes);
      bus = ring_bus_bandwidth(s, links, p);
      const double steps = type == CollectiveType::kAllReduce ? 2.0 * (s.ranks - 1) : s.ranks - 1.0;
      ratio = s.ranks / steps;
    } else {
      latency = tree_latency(s, p);
      bus = tree_bus_bandwidth(s, links, p, bytes);
      ratio = 0.5;
    }
    if (bus <= 0) continue;
    const double time = latency + bytes / (1000 * bus * ratio);
    choice.time_us[static_cast<size_t>(kNcclOrder[p])] = time;
    if (best < 0 || time < best) {
      best = time;
      choice.protocol = kNcclOrder[p];
    }
  }
  return choice;
}

}  // namespace etwire::collectives

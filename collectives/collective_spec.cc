#include "collectives/collective_spec.h"

#include <fmt/format.h>

#include <algorithm>
#include <unordered_set>

namespace etwire::collectives {

namespace {

using trace::CollectiveType;

uint64_t times_members(uint64_t bytes, uint32_t members, std::string_view what) {
  uint64_t product = 0;
  if (__builtin_mul_overflow(bytes, static_cast<uint64_t>(members), &product)) {
    throw SpecError(
        fmt::format("bytes: {} x {} ranks of {} overflows 64 bits", bytes, members, what));
  }
  return product;
}

DataLayout make_layout(const CollectiveSpec& spec, uint32_t n) {
  if (!spec.collective) return DataLayout::whole(n, spec.bytes);
  switch (*spec.collective) {
    case CollectiveType::kAllReduce:
    case CollectiveType::kReduce:
    case CollectiveType::kBroadcast:
    case CollectiveType::kBarrier:
      return DataLayout::whole(n, full_buffer_bytes(spec, n));
    case CollectiveType::kAllToAll:
      return DataLayout::exchange(n, spec.bytes, spec.peer_bytes);
    default:
      return DataLayout::blocks(n, full_buffer_bytes(spec, n));
  }
}

}  // namespace

uint64_t full_buffer_bytes(const CollectiveSpec& spec, uint32_t n) {
  const bool input = spec.size_convention == SizeConvention::kInput;
  if (!spec.collective) return spec.bytes;
  switch (*spec.collective) {
    case CollectiveType::kBarrier:
      return 0;
    case CollectiveType::kAllGather:
    case CollectiveType::kGather:
      // Input: comm_size is one shard. Output: it is the whole result, cut as evenly as possible.
      return input ? times_members(spec.bytes, n, "shard") : spec.bytes;
    case CollectiveType::kReduceScatter:
    case CollectiveType::kScatter:
      return input ? spec.bytes : times_members(spec.bytes, n, "block");
    case CollectiveType::kReduceScatterBlock:
      // Equal blocks by definition: with the input convention the comm_size % n trailing bytes
      // belong to no block and are not moved.
      return input ? spec.bytes / n * n : times_members(spec.bytes, n, "block");
    default:
      return spec.bytes;
  }
}

std::string_view size_convention_name(SizeConvention convention) {
  return convention == SizeConvention::kInput ? "input" : "output";
}

std::optional<SizeConvention> parse_size_convention(std::string_view text) {
  if (text == "input") return SizeConvention::kInput;
  if (text == "output") return SizeConvention::kOutput;
  return std::nullopt;
}

uint32_t ResolvedSpec::channels() const {
  switch (algorithm) {
    case Algorithm::kBidirectionalRing:
    case Algorithm::kDoubleBinaryTree:
      return 2;
    case Algorithm::kRing:
      return std::max(1u, given_channels);
    case Algorithm::kTree:
      return given_channels > 0 ? given_channels : 2;
    default:
      return 1;
  }
}

bool takes_channels(const CollectiveSpec& spec) {
  const auto& type = spec.collective;
  const bool ring_family =
      type && (*type == CollectiveType::kAllReduce || *type == CollectiveType::kReduceScatter ||
               *type == CollectiveType::kAllGather);
  const Algorithm algorithm = spec.algorithm.value_or(default_algorithm(type));
  return (ring_family && algorithm == Algorithm::kRing) ||
         (type == CollectiveType::kAllReduce && algorithm == Algorithm::kTree);
}

namespace {

// Channels are the rings of the ring family's all-reduce, reduce-scatter and all-gather, or the
// trees of the tree all-reduce.
uint32_t resolve_channels(const CollectiveSpec& spec, const ResolvedSpec& out) {
  if (!spec.channels) return 0;
  const uint32_t channels = *spec.channels;
  if (channels < 1 || channels > kMaxChannels) {
    throw SpecError(fmt::format("channels: {} channels; use 1..{}", channels, kMaxChannels));
  }
  if (!takes_channels(spec)) {
    throw SpecError(fmt::format(
        "channels: built for the ring all-reduce, reduce-scatter and all-gather and the tree "
        "all-reduce only, not {} {}",
        algorithm_name(out.algorithm), collective_kind_name(out.collective)));
  }
  if (uint64_t{channels} * out.qps > uint64_t{UINT16_MAX} + 1) {
    throw SpecError(fmt::format("channels: {} channels x {} QPs exceed the 65536 QP ids of a peer",
                                channels, out.qps));
  }
  return channels;
}

// A graph lays out the channels of rings over hosts: its GPUs and NICs must be local indices of
// this spec's hosts.
std::shared_ptr<const config::RingGraph> resolve_ring_graph(const CollectiveSpec& spec,
                                                            const ResolvedSpec& out) {
  if (!spec.ring_graph) return nullptr;
  if (out.algorithm != Algorithm::kRing || !spec.channels) {
    throw SpecError("graph: lays out the channels of the ring family only, with channels given");
  }
  const auto& channels = spec.ring_graph->channels;
  if (channels.empty()) throw SpecError("graph: no channel");
  const uint32_t per_host = spec.ranks_per_host;
  for (size_t c = 0; c < channels.size(); ++c) {
    const config::RingGraphChannel& channel = channels[c];
    const bool outside = std::any_of(channel.gpus.begin(), channel.gpus.end(),
                                     [&](uint32_t gpu) { return gpu >= per_host; });
    if (channel.gpus.size() != per_host || outside) {
      throw SpecError(fmt::format(
          "graph: channel {} goes through {} GPUs of a server, but hosts hold {} ranks: the graph "
          "must come from servers of as many GPUs",
          c, channel.gpus.size(), per_host));
    }
    for (const std::optional<uint32_t>& nic : {channel.net_in, channel.net_out}) {
      if (nic && *nic >= per_host) {
        throw SpecError(fmt::format(
            "graph: channel {} uses NIC {}, but hosts of {} ranks have NICs 0..{} (one per GPU)", c,
            *nic, per_host, per_host - 1));
      }
    }
  }
  return spec.ring_graph;
}

std::shared_ptr<const AggregationTree> resolve_aggregation(const CollectiveSpec& spec,
                                                           const ResolvedSpec& out) {
  if (out.algorithm != Algorithm::kCollNet) return nullptr;
  if (!spec.aggregation) {
    const int32_t top = *std::max_element(spec.ranks.begin(), spec.ranks.end());
    return std::make_shared<const AggregationTree>(
        single_switch_tree(static_cast<uint32_t>(top) + 1));
  }
  if (const std::string problem = spec.aggregation->check(); !problem.empty()) {
    throw SpecError("aggregation: " + problem);
  }
  for (int32_t rank : spec.ranks) {
    if (static_cast<size_t>(rank) >= spec.aggregation->leaf_of_rank.size()) {
      throw SpecError(fmt::format("aggregation: rank {} hangs off no switch of the tree", rank));
    }
  }
  return spec.aggregation;
}

}  // namespace

ResolvedSpec resolve(const CollectiveSpec& spec) {
  ResolvedSpec out;
  out.collective = spec.collective;
  const std::string_view name = collective_kind_name(spec.collective);

  if (spec.ranks.empty()) throw SpecError("ranks: the process group is empty");
  std::unordered_set<int32_t> seen;
  for (int32_t rank : spec.ranks) {
    if (rank < 0) throw SpecError(fmt::format("ranks: rank {} is negative", rank));
    if (!seen.insert(rank).second) {
      throw SpecError(fmt::format("ranks: rank {} appears twice in the process group", rank));
    }
  }
  const auto n = static_cast<uint32_t>(spec.ranks.size());
  if (!spec.collective && n > 2) {
    throw SpecError(
        fmt::format("ranks: a send/recv involves a sender and a receiver, not {} ranks", n));
  }
  out.ranks = spec.ranks;

  out.algorithm = spec.algorithm.value_or(default_algorithm(spec.collective));
  if (!is_applicable(out.algorithm, spec.collective)) {
    std::string choices;
    for (Algorithm a : applicable_algorithms(spec.collective)) {
      choices += fmt::format("{}{}", choices.empty() ? "" : ", ", algorithm_name(a));
    }
    throw SpecError(fmt::format("algo: {} does not apply to {} (choose from: {})",
                                algorithm_name(out.algorithm), name, choices));
  }

  if (spec.root) {
    auto it = std::find(spec.ranks.begin(), spec.ranks.end(), *spec.root);
    if (it == spec.ranks.end()) {
      throw SpecError(fmt::format("root: rank {} is not in the process group", *spec.root));
    }
    out.root = static_cast<uint32_t>(it - spec.ranks.begin());
  }

  if (!spec.peer_bytes.empty()) {
    if (!out.is(CollectiveType::kAllToAll)) {
      throw SpecError(
          fmt::format("peer bytes: only all-to-all takes per-peer sizes, not {}", name));
    }
    if (spec.peer_bytes.size() != static_cast<uint64_t>(n) * n) {
      throw SpecError(
          fmt::format("peer bytes: {} values given; all-to-all-v over {} ranks needs "
                      "{} x {} = {}",
                      spec.peer_bytes.size(), n, n, n, static_cast<uint64_t>(n) * n));
    }
  }
  if (spec.qps < 1 || spec.qps > kMaxQps) {
    throw SpecError(fmt::format("qps: {} QPs per peer; use 1..{}", spec.qps, kMaxQps));
  }
  if (spec.qp_alignment < 1) throw SpecError("qp alignment: must be at least 1 byte");
  if (spec.ranks_per_host < 1) throw SpecError("ranks per host: must be at least 1");
  if (spec.barrier_bytes < 1) throw SpecError("barrier bytes: a barrier message needs a byte");
  if (spec.chunks < 1) throw SpecError("chunks: must be at least 1");
  if (spec.chunk_bytes && *spec.chunk_bytes < 1) throw SpecError("chunk size: must be at least 1");

  out.qps = spec.qps;
  out.qp_alignment = spec.qp_alignment;
  out.ranks_per_host = spec.ranks_per_host;
  out.barrier_bytes = spec.barrier_bytes;
  out.trace_bytes = spec.bytes;
  out.given_channels = resolve_channels(spec, out);
  out.ring_graph = resolve_ring_graph(spec, out);
  out.aggregation = resolve_aggregation(spec, out);
  out.size_convention = spec.size_convention;
  out.layout = make_layout(spec, n);

  const uint64_t full = out.layout.full_bytes();
  uint64_t chunks = spec.chunks;
  if (spec.chunk_bytes) chunks = full == 0 ? 1 : (full - 1) / *spec.chunk_bytes + 1;
  if (chunks > kMaxChunks) {
    throw SpecError(
        fmt::format("chunks: {} chunks of a {}-byte buffer; at most {}", chunks, full, kMaxChunks));
  }
  // A chunk with no byte in it moves nothing: never cut finer than one byte per chunk.
  if (out.is(CollectiveType::kBarrier)) chunks = 1;
  out.chunks = static_cast<uint32_t>(std::max<uint64_t>(1, std::min<uint64_t>(chunks, full)));
  return out;
}

}  // namespace etwire::collectives

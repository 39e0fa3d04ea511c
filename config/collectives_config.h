// `collectives:` — how a trace's collectives become traffic: the algorithm per collective type,
// chunking, QPs per peer connection, the protocol and its buffers.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "config/collective_algorithm.h"
#include "config/node_type.h"
#include "config/protocol.h"
#include "config/ring_graph.h"

namespace etwire::config {

// What a trace's involved_dim does in a run, with dimension 0 the ranks of a host and dimensions 1
// and up the hosts (docs/collectives.md, "Dimensions").
enum class Hierarchy : uint8_t {
  kOff,          // involved_dim is not read: every collective runs over its process group
  kInvolvedDim,  // an all-reduce over both runs hierarchically; one over some of them is refused
};

struct CollectivesConfig {
  // Per collective type; unset = the generator's default for that type.
  std::array<std::optional<Algorithm>, kCollectiveTypeCount> algorithms{};
  // Per collective type: `auto`, the algorithm the tuner picks per collective (all-reduce,
  // all-gather and reduce-scatter only; `algorithms` is unset for these).
  std::array<bool, kCollectiveTypeCount> tuned_algorithms{};
  // Chunks pipelined through the algorithm: `chunks`, or ceil(bytes / chunk_bytes) when set.
  uint32_t chunks = 1;
  std::optional<uint64_t> chunk_bytes;
  uint32_t qps_per_peer = 1;  // QPs per peer connection; each transfer is split over them
  // Ring all-reduce, reduce-scatter and all-gather: rings (NCCL's channels) laid rail by rail
  // over each job's hosts. Tree all-reduce: trees, each entering the hosts on its own rail.
  // Unset: one per NIC of a server when it has several, as NCCL opens at least one per NIC
  // (control/plan/collective_choice.h). 0, or unset with one NIC per server: the textbook
  // layout, one ring in group order or NCCL's two trees.
  std::optional<uint32_t> channels;
  uint64_t qp_alignment = 128;  // a transfer's per-QP pieces are rounded up to this
  // The protocol and its buffers: a transfer is posted as messages of one slice, each padded
  // to the protocol's lines, with at most a window of them in flight per connection.
  ProtocolConfig protocol;
  uint64_t barrier_bytes = 8;  // size of each barrier message
  Hierarchy hierarchy = Hierarchy::kOff;
  // The ring channels of NCCL's graph dump (`graph`, read from graph_file): the ring family's
  // rings follow its channels, as many as it has unless `channels` says otherwise.
  std::string graph_file;
  std::shared_ptr<const RingGraph> ring_graph;

  // The ring family's channels: `channels`, else the graph's.
  std::optional<uint32_t> ring_channels() const {
    if (channels || !ring_graph) return channels;
    return static_cast<uint32_t>(ring_graph->channels.size());
  }

  std::optional<Algorithm> algorithm_for(CollectiveType type) const {
    return algorithms[static_cast<size_t>(type)];
  }
  bool algorithm_tuned(CollectiveType type) const {
    return tuned_algorithms[static_cast<size_t>(type)];
  }
  bool any_algorithm_tuned() const {
    return std::find(tuned_algorithms.begin(), tuned_algorithms.end(), true) !=
           tuned_algorithms.end();
  }
};

}  // namespace etwire::config

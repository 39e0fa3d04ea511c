// What to generate: a collective as a trace states it (type, process-group ranks, comm_size,
// root), plus the generation choices (algorithm, chunking, QPs per peer, byte semantics, hosts).
// resolve() checks it and applies every default; generation works only from a ResolvedSpec.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string_view>
#include <vector>

#include "collectives/aggregation_tree.h"
#include "collectives/algorithm.h"
#include "collectives/data_layout.h"
#include "config/protocol.h"
#include "config/ring_graph.h"

namespace etwire::collectives {

// What comm_size counts where a rank's input and output differ in size. Producers disagree (see
// docs/collectives.md): the PyTorch converter and ASTRA-sim record each rank's input buffer.
using SizeConvention = config::SizeConvention;
std::string_view size_convention_name(SizeConvention convention);  // "input", "output"
std::optional<SizeConvention> parse_size_convention(std::string_view text);

struct CollectiveSpec {
  CollectiveKind collective = trace::CollectiveType::kAllReduce;
  // Global rank ids of the process group, in group order: any distinct non-negative ids. Member
  // position k is ranks[k]. Send/recv: ranks[0] sends to ranks[1] (one rank: a local no-op).
  std::vector<int32_t> ranks;
  // comm_size as the trace states it (see SizeConvention). Unused for barrier and all-to-all-v.
  uint64_t bytes = 0;
  // Global rank of the root (broadcast, reduce, gather, scatter); default ranks[0].
  std::optional<int32_t> root;
  // All-to-all-v: n x n bytes, row = sender position, column = receiver position.
  std::vector<uint64_t> peer_bytes;
  std::optional<Algorithm> algorithm;  // default_algorithm(collective) when unset
  // Chunks pipelined through the algorithm: `chunks`, or when chunk_bytes is set
  // ceil(F / chunk_bytes). Never more chunks than bytes.
  uint32_t chunks = 1;
  std::optional<uint64_t> chunk_bytes;
  // Each transfer is split over this many QPs per peer connection, NCCL style: pieces of
  // ceil(len / qps) rounded up to qp_alignment bytes, the last piece(s) taking what is left.
  uint32_t qps = 1;
  uint64_t qp_alignment = 128;
  SizeConvention size_convention = SizeConvention::kInput;
  // Hosts hold `ranks_per_host` consecutive global ranks (host = rank / H). Transfers inside a
  // host are not network traffic; PXN relays through them.
  uint32_t ranks_per_host = 1;
  uint64_t barrier_bytes = 8;  // size of each barrier message
  // Ring all-reduce, reduce-scatter and all-gather: the data split over this many rings (NCCL's
  // channels), each on its own QPs, laid over the hosts rail by rail (ring_layout.h). Unset: one
  // ring in group order. Tree all-reduce: this many trees (tree_layout.h); unset: two.
  std::optional<uint32_t> channels;
  // Ring channels as an NCCL graph dump lays them on a server: channel c visits each host's
  // members in the order of the graph's channel c mod (its channels) and leaves the host by its
  // exit NIC (ring_layout.h). Needs `channels` (the graph's count when a run takes it from there).
  std::shared_ptr<const config::RingGraph> ring_graph;
  // How a run puts the transfers on the wire (config/protocol.h); programs do not depend on it.
  config::Protocol protocol = config::Protocol::kSimple;
  // CollNet: the fabric's aggregation nodes (aggregation_tree.h), with a leaf for every rank of
  // the group. Unset: one switch under every rank (single_switch_tree). Other algorithms ignore it.
  std::shared_ptr<const AggregationTree> aggregation;
};

// Whether CollectiveSpec::channels applies to `spec`'s collective and algorithm (the default one
// when unset): the ring all-reduce, reduce-scatter and all-gather, and the tree all-reduce.
bool takes_channels(const CollectiveSpec& spec);

// A spec the generator cannot honour; the message names the offending field.
class SpecError : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

inline constexpr uint32_t kMaxChunks = 1u << 20;
inline constexpr uint32_t kMaxQps = 256;
inline constexpr uint32_t kMaxChannels = 64;

struct ResolvedSpec {
  CollectiveKind collective;
  Algorithm algorithm = Algorithm::kRing;
  std::vector<int32_t> ranks;
  uint32_t root = 0;    // member position
  uint32_t chunks = 1;  // effective count
  uint32_t qps = 1;
  uint64_t qp_alignment = 128;
  uint32_t ranks_per_host = 1;
  uint64_t barrier_bytes = 8;
  uint32_t given_channels = 0;  // CollectiveSpec::channels, checked; 0 when unset
  std::shared_ptr<const config::RingGraph> ring_graph;  // checked against ranks_per_host
  std::shared_ptr<const AggregationTree> aggregation;   // CollNet only, checked against ranks
  uint64_t trace_bytes = 0;
  SizeConvention size_convention = SizeConvention::kInput;
  DataLayout layout;

  uint32_t members() const { return static_cast<uint32_t>(ranks.size()); }
  // CollNet's aggregation nodes, programs after the members' (CollectiveProgram::aggregators).
  uint32_t aggregators() const { return aggregation ? aggregation->nodes() : 0; }
  uint32_t participants() const { return members() + aggregators(); }
  // Independent pipelines that each get their own `qps` QPs per peer: the two directions of a
  // bidirectional ring, the two trees of a double binary tree (NCCL runs them on separate
  // channels) and the channels of a ring or tree. A piece's QP id is channel * qps + piece.
  uint32_t channels() const;
  // Rings laid rail by rail: channels were given (ring_layout.h).
  bool rail_rings() const { return given_channels > 0; }
  bool is(trace::CollectiveType type) const { return collective && *collective == type; }
};

// Throws SpecError.
ResolvedSpec resolve(const CollectiveSpec& spec);

// F, the buffer a collective over `members` ranks moves (DataLayout::full_bytes): the all-reduce's,
// the all-gather's output, the reduce-scatter's input; for all-to-all what a member sends when
// every peer gets the same. Throws SpecError when it overflows 64 bits.
uint64_t full_buffer_bytes(const CollectiveSpec& spec, uint32_t members);

}  // namespace etwire::collectives

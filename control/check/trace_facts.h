// What the configuration checks and the plan need from a job's trace set, gathered in one pass
// over every rank file: the world size, the process groups nodes name (and the ones the
// comm-group file does not define), and per rank the communication it issues, aggregated (a
// collective of the same type, group and size issued 1000 times is one entry with count 1000).
#pragma once

#include <compare>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "trace/feeder/node_filter.h"
#include "trace/node.h"
#include "trace/trace_set.h"

namespace etwire::control {

// "group 3", or "the all-ranks group".
std::string group_label(int64_t group_id);

// What a collective's involved_dim says with etwire's two dimensions: dimension 0 the ranks of a
// host, dimensions 1 and up the hosts.
enum class DimensionScope : uint8_t {
  kWhole,        // no involved_dim, or [true]: the whole process group, flat
  kBoth,         // every one of two or more dimensions: the whole process group, by dimension
  kWithinHosts,  // dimension 0 only: each host's part of the group apart
  kAcrossHosts,  // every dimension but 0: the group's ranks of each local index (a rail) apart
  kPartial,      // some dimensions of the hosts left out: no part of the group etwire can name
};
DimensionScope dimension_scope(const std::vector<bool>& involved_dim);

// The part of `members` (global ranks, in group order) that a collective of `scope` by `rank`
// runs over, with hosts of `ranks_per_host` consecutive ranks: its host's members
// (kWithinHosts), those of its local index (kAcrossHosts), else every member. Also returns the
// part's index among the group's parts (its host, its local index; 0 for the whole group).
struct GroupPart {
  std::vector<int32_t> members;
  uint32_t index = 0;
};
GroupPart group_part(const std::vector<int32_t>& members, DimensionScope scope, int32_t rank,
                     uint32_t ranks_per_host);

struct CollectiveCall {
  trace::CollectiveType type = trace::CollectiveType::kAllReduce;
  int64_t group_id = trace::kAllRanksGroup;  // a comm-group file id, or trace::kAllRanksGroup
  uint64_t bytes = 0;                        // comm_size as the trace states it (0 for a barrier)
  DimensionScope scope = DimensionScope::kWhole;
  auto operator<=>(const CollectiveCall&) const = default;
};

struct PeerTransfer {
  int32_t peer = 0;
  uint64_t bytes = 0;
  auto operator<=>(const PeerTransfer&) const = default;
};

struct RankComm {
  std::map<CollectiveCall, uint64_t> collectives;  // -> times issued
  std::map<PeerTransfer, uint64_t> sends;          // -> times issued
  std::map<PeerTransfer, uint64_t> recvs;
};

// A pg_name that names no process group, at its first use.
struct UndefinedGroup {
  std::string pg_name;
  int32_t rank = 0;
  std::string problem;  // the trace library's message, naming the file, record and node
  uint64_t uses = 0;
};

// A point-to-point operation whose peer is outside the trace set.
struct StrayPeer {
  int32_t rank = 0;
  int32_t peer = 0;
  bool send = true;
  std::string location;  // "FILE: record N (node id X)"
};

// Collectives whose involved_dim names only some dimensions, at the first of them.
struct PartialDimensions {
  std::string location;  // "FILE: record N (node id X)"
  std::vector<bool> involved_dim;
  uint64_t uses = 0;
};

// A collective issued by a rank that is not a member of its process group.
struct OutsiderCall {
  int32_t rank = 0;
  int64_t group_id = 0;
  std::string location;  // "FILE: record N (node id X)", the first such node of the rank
  uint64_t uses = 0;
};

struct TraceFacts {
  int32_t world_size = 0;
  std::vector<trace::RankFile> files;
  // Groups used by kept nodes: group key (file id or trace::kAllRanksGroup) -> members in group
  // order.
  std::map<int64_t, std::vector<int32_t>> groups;
  std::vector<RankComm> ranks;  // by rank; kept nodes only
  std::vector<UndefinedGroup> undefined_groups;
  std::vector<StrayPeer> stray_peers;
  std::vector<OutsiderCall> outsider_calls;  // one per (rank, group)
  std::optional<PartialDimensions> partial_dimensions;
  uint64_t nodes = 0;
  uint64_t comm_nodes_kept = 0;
};

// Members of one process group that issue different numbers of collectives on it: a replay
// would wait forever for the ones the others never issue.
struct GroupCountMismatch {
  int64_t group_id = 0;
  int32_t rank = 0;  // the member with the most
  uint64_t count = 0;
  int32_t other_rank = 0;  // the member with the fewest
  uint64_t other_count = 0;
};

// One entry per process group whose members disagree.
std::vector<GroupCountMismatch> mismatched_group_counts(const TraceFacts& facts);

// Reads every rank of `set`. Nodes the filter drops are skipped: they complete at once in a
// replay, so neither their traffic nor their process group matters. Throws trace::TraceError
// when a file cannot be read.
TraceFacts scan_trace_set(const trace::TraceSet& set, const feeder::NodeFilter& filter);

}  // namespace etwire::control

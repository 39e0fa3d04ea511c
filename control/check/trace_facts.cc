#include "control/check/trace_facts.h"

#include <fmt/format.h>

#include <algorithm>

#include "trace/trace_error.h"

namespace etwire::control {

namespace {

// Resolves each distinct pg_name once: traces repeat a handful of names millions of times.
class GroupResolver {
 public:
  GroupResolver(const trace::TraceSet& set, TraceFacts& facts) : set_(set), facts_(facts) {}

  // The group id of the node's pg_name, or nullopt when it names no group (recorded).
  std::optional<int64_t> resolve(const trace::TraceNode& node, int32_t rank,
                                 const std::string& file) {
    std::string key = node.comm.pg_name.value_or("");
    bool present = node.comm.pg_name.has_value();
    auto& cache = present ? named_ : absent_;
    auto it = cache.find(key);
    if (it != cache.end()) {
      if (!it->second) ++facts_.undefined_groups[undefined_index_.at(key)].uses;
      return it->second;
    }
    std::optional<int64_t> id;
    try {
      trace::NodeGroup group = set_.node_group(node, file);
      id = group.key;
      facts_.groups.emplace(group.key, std::move(group.members));
    } catch (const trace::TraceError& e) {
      undefined_index_[key] = facts_.undefined_groups.size();
      facts_.undefined_groups.push_back({key, rank, e.what(), 1});
    }
    cache.emplace(key, id);
    return id;
  }

 private:
  const trace::TraceSet& set_;
  TraceFacts& facts_;
  std::map<std::string, std::optional<int64_t>> named_;
  std::map<std::string, std::optional<int64_t>> absent_;
  std::map<std::string, size_t> undefined_index_;
};

std::string locate(const std::string& file, const trace::TraceNode& node) {
  return fmt::format("{}: record {} (node id {})", file, node.record_index, node.id);
}

void note_outsider(TraceFacts& facts, int32_t rank, int64_t group, const std::string& file,
                   const trace::TraceNode& node) {
  for (auto& call : facts.outsider_calls) {
    if (call.rank == rank && call.group_id == group) {
      ++call.uses;
      return;
    }
  }
  facts.outsider_calls.push_back({rank, group, locate(file, node), 1});
}

}  // namespace

std::string group_label(int64_t group_id) {
  return group_id == trace::kAllRanksGroup ? "the all-ranks group"
                                           : fmt::format("process group {}", group_id);
}

std::vector<GroupCountMismatch> mismatched_group_counts(const TraceFacts& facts) {
  std::vector<GroupCountMismatch> out;
  for (const auto& [group, members] : facts.groups) {
    std::optional<GroupCountMismatch> extremes;
    for (const int32_t member : members) {
      if (member < 0 || static_cast<size_t>(member) >= facts.ranks.size()) continue;
      uint64_t count = 0;
      for (const auto& [call, times] : facts.ranks[static_cast<size_t>(member)].collectives) {
        if (call.group_id == group) count += times;
      }
      if (!extremes) {
        extremes = GroupCountMismatch{group, member, count, member, count};
      } else if (count > extremes->count) {
        extremes->rank = member;
        extremes->count = count;
      } else if (count < extremes->other_count) {
        extremes->other_rank = member;
        extremes->other_count = count;
      }
    }
    if (extremes && extremes->count != extremes->other_count) out.push_back(*extremes);
  }
  return out;
}

DimensionScope dimension_scope(const std::vector<bool>& involved_dim) {
  const bool all = std::find(involved_dim.begin(), involved_dim.end(), false) == involved_dim.end();
  if (all) return involved_dim.size() > 1 ? DimensionScope::kBoth : DimensionScope::kWhole;
  if (involved_dim.size() < 2) return DimensionScope::kPartial;  // [false]: nothing involved
  // Dimensions 1 and up are the hosts together: they are in or out as one.
  const auto hosts_begin = involved_dim.begin() + 1;
  const bool all_hosts = std::find(hosts_begin, involved_dim.end(), false) == involved_dim.end();
  const bool no_hosts = std::find(hosts_begin, involved_dim.end(), true) == involved_dim.end();
  if (involved_dim[0] && no_hosts) return DimensionScope::kWithinHosts;
  if (!involved_dim[0] && all_hosts) return DimensionScope::kAcrossHosts;
  return DimensionScope::kPartial;
}

GroupPart group_part(const std::vector<int32_t>& members, DimensionScope scope, int32_t rank,
                     uint32_t ranks_per_host) {
  GroupPart part;
  if (scope != DimensionScope::kWithinHosts && scope != DimensionScope::kAcrossHosts) {
    part.members = members;
    return part;
  }
  const int32_t per_host = static_cast<int32_t>(std::max<uint32_t>(ranks_per_host, 1));
  const auto key = [&](int32_t r) {
    return scope == DimensionScope::kWithinHosts ? r / per_host : r % per_host;
  };
  part.index = static_cast<uint32_t>(key(rank));
  for (int32_t member : members) {
    if (key(member) == key(rank)) part.members.push_back(member);
  }
  return part;
}

TraceFacts scan_trace_set(const trace::TraceSet& set, const feeder::NodeFilter& filter) {
  TraceFacts facts;
  facts.world_size = set.world_size();
  facts.files = set.files();
  facts.ranks.resize(static_cast<size_t>(facts.world_size));
  GroupResolver groups(set, facts);
  trace::TraceNode node;
  for (const auto& file : set.files()) {
    auto source = set.open(file.rank);
    RankComm& comm = facts.ranks[static_cast<size_t>(file.rank)];
    while (source->next(node)) {
      ++facts.nodes;
      if (!trace::is_comm_type(node.type)) continue;
      // Nodes the filter leaves out complete at once without traffic: their groups do not matter.
      if (!filter.keeps(node)) continue;
      if (node.type == trace::NodeType::kCommColl) {
        auto group = groups.resolve(node, file.rank, file.path);
        if (!group) continue;
        const auto& members = facts.groups.at(*group);
        if (std::find(members.begin(), members.end(), file.rank) == members.end()) {
          note_outsider(facts, file.rank, *group, file.path, node);
          continue;
        }
        if (!node.carries_traffic()) continue;
        ++facts.comm_nodes_kept;
        const DimensionScope scope = dimension_scope(node.comm.involved_dim);
        CollectiveCall call{*node.comm.coll_type, *group, node.comm.size.value_or(0), scope};
        ++comm.collectives[call];
        if (scope == DimensionScope::kPartial) {
          if (!facts.partial_dimensions) {
            facts.partial_dimensions =
                PartialDimensions{locate(file.path, node), node.comm.involved_dim, 0};
          }
          ++facts.partial_dimensions->uses;
        }
        continue;
      }
      if (!node.carries_traffic()) continue;
      ++facts.comm_nodes_kept;
      bool send = node.type == trace::NodeType::kCommSend;
      // A missing end is the file's own rank.
      int32_t peer = send ? node.comm.dst.value_or(file.rank) : node.comm.src.value_or(file.rank);
      if (peer < 0 || peer >= facts.world_size) {
        facts.stray_peers.push_back({file.rank, peer, send, locate(file.path, node)});
        continue;
      }
      auto& side = send ? comm.sends : comm.recvs;
      ++side[PeerTransfer{peer, *node.comm.size}];
    }
  }
  return facts;
}

}  // namespace etwire::control

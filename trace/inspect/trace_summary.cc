#include "trace/inspect/trace_summary.h"

#include <fmt/format.h>

#include <algorithm>
#include <unordered_map>

#include "trace/trace_error.h"

namespace etwire::inspect {

using trace::CollectiveType;
using trace::NodeType;
using trace::TraceNode;

bool GroupSummary::consistent() const {
  if (per_member.size() != members.size()) return per_member.empty();
  uint64_t first = per_member.begin()->second.count;
  return std::all_of(per_member.begin(), per_member.end(),
                     [first](const auto& entry) { return entry.second.count == first; });
}

namespace {

void count_node(const TraceNode& node, RankSummary& rank) {
  ++rank.nodes;
  ++rank.nodes_by_type[static_cast<size_t>(node.type)];
  rank.data_edges += node.data_deps.size();
  rank.ctrl_edges += node.ctrl_deps.size();
  const uint64_t bytes = node.comm.size.value_or(0);
  switch (node.type) {
    case NodeType::kComp:
      rank.compute_us += node.duration_us;
      break;
    case NodeType::kMemLoad:
    case NodeType::kMemStore:
      rank.bytes_by_type[static_cast<size_t>(node.type)] += node.tensor_size.value_or(0);
      break;
    case NodeType::kCommSend:
    case NodeType::kCommRecv:
    case NodeType::kCommColl:
      if (!node.carries_traffic()) {
        ++rank.bookkeeping_comm_nodes;
        break;
      }
      ++rank.traffic_comm_nodes;
      rank.bytes_by_type[static_cast<size_t>(node.type)] += bytes;
      rank.pg_names[node.comm.pg_name.value_or("")].add(bytes);
      if (node.type == NodeType::kCommColl) {
        rank.collectives[static_cast<size_t>(*node.comm.coll_type)].add(bytes);
      } else if (node.type == NodeType::kCommSend) {
        rank.sends.add(bytes);
      } else {
        rank.recvs.add(bytes);
      }
      break;
    default:
      break;
  }
}

}  // namespace

TraceSummary summarize(const trace::TraceSet& set, const SummaryOptions& options) {
  TraceSummary summary;
  summary.spec = set.spec();
  summary.world_size = set.world_size();
  summary.comm_groups_file = set.comm_groups().origin();
  std::map<int64_t, GroupSummary> groups;

  // Depth of every node seen so far. The feeder issues parents before children, so each parent's
  // depth is known when a child arrives. This map is the one part of inspect that grows with the
  // trace (about 40 bytes a node); the feeder itself stays within its window.
  std::unordered_map<uint64_t, uint64_t> depth;
  for (const auto& file : set.files()) {
    RankSummary rank;
    rank.rank = file.rank;
    rank.file = file.path;
    depth.clear();
    feeder::Feeder feeder(set.open(file.rank), options.feeder);
    while (auto issued = feeder.next()) {
      const TraceNode& node = *issued->node;
      count_node(node, rank);
      uint64_t d = 0;
      for (uint64_t parent : node.data_deps) {
        auto it = depth.find(parent);
        if (it != depth.end()) d = std::max(d, it->second);
      }
      depth[node.id] = d + 1;
      rank.depth = std::max(rank.depth, d + 1);
      if (node.type == NodeType::kCommColl && node.carries_traffic()) {
        // Keyed as a replay keys it, so the file's group 0 and the implicit all-ranks group stay
        // two rows when a set uses both.
        auto group = set.node_group(node, file.path);
        if (std::find(group.members.begin(), group.members.end(), file.rank) ==
            group.members.end()) {
          throw trace::TraceError(
              {file.path, node.record_index, node.id},
              fmt::format("rank {} issues a collective on process group {}, which does not "
                          "include it",
                          file.rank,
                          group.key == trace::kAllRanksGroup ? std::string("(all ranks)")
                                                             : std::to_string(group.key)));
        }
        auto& g = groups[group.key];
        g.id = group.key;
        g.members = std::move(group.members);
        std::string pg = node.comm.pg_name.value_or("");
        if (std::find(g.pg_names.begin(), g.pg_names.end(), pg) == g.pg_names.end()) {
          g.pg_names.push_back(pg);
        }
        g.per_member[file.rank].add(node.comm.size.value_or(0));
      }
      feeder.complete(*issued);
    }
    rank.feeder = feeder.stats();
    summary.ranks.push_back(std::move(rank));
  }
  for (auto& [id, g] : groups) summary.groups.push_back(std::move(g));
  return summary;
}

namespace {

nlohmann::ordered_json count_json(const CountAndBytes& cb) {
  return {{"count", cb.count}, {"bytes", cb.bytes}};
}

}  // namespace

nlohmann::ordered_json to_json(const TraceSummary& summary) {
  // Sub-objects are built as locals and moved in: ordered_json keeps members in a vector, so a
  // reference to one member dies when the next member is added.
  nlohmann::ordered_json out;
  out["trace_set"] = summary.spec;
  out["world_size"] = summary.world_size;
  out["comm_groups"] = summary.comm_groups_file.empty()
                           ? nlohmann::ordered_json()
                           : nlohmann::ordered_json(summary.comm_groups_file);
  nlohmann::ordered_json ranks = nlohmann::ordered_json::array();
  for (const auto& r : summary.ranks) {
    nlohmann::ordered_json by_type = nlohmann::ordered_json::object();
    nlohmann::ordered_json bytes = nlohmann::ordered_json::object();
    for (int t = 0; t < trace::kNodeTypeCount; ++t) {
      auto name = std::string(trace::node_type_name(static_cast<NodeType>(t)));
      by_type[name] = r.nodes_by_type[static_cast<size_t>(t)];
      if (r.bytes_by_type[static_cast<size_t>(t)] != 0) {
        bytes[name] = r.bytes_by_type[static_cast<size_t>(t)];
      }
    }
    nlohmann::ordered_json colls = nlohmann::ordered_json::object();
    for (int c = 0; c < trace::kCollectiveTypeCount; ++c) {
      const auto& cb = r.collectives[static_cast<size_t>(c)];
      if (cb.count != 0) {
        colls[std::string(trace::collective_type_name(static_cast<CollectiveType>(c)))] =
            count_json(cb);
      }
    }
    nlohmann::ordered_json pgs = nlohmann::ordered_json::object();
    for (const auto& [name, cb] : r.pg_names) pgs[name] = count_json(cb);

    nlohmann::ordered_json j;
    j["rank"] = r.rank;
    j["file"] = r.file;
    j["nodes"] = r.nodes;
    j["nodes_by_type"] = std::move(by_type);
    j["bytes_by_type"] = std::move(bytes);
    j["traffic_comm_nodes"] = r.traffic_comm_nodes;
    j["bookkeeping_comm_nodes"] = r.bookkeeping_comm_nodes;
    j["collectives"] = std::move(colls);
    j["sends"] = count_json(r.sends);
    j["recvs"] = count_json(r.recvs);
    j["compute_us"] = r.compute_us;
    j["pg_names"] = std::move(pgs);
    j["data_edges"] = r.data_edges;
    j["ctrl_edges"] = r.ctrl_edges;
    j["depth"] = r.depth;
    j["peak_window_nodes"] = r.feeder.peak_live_nodes;
    ranks.push_back(std::move(j));
  }
  out["ranks"] = std::move(ranks);

  nlohmann::ordered_json groups = nlohmann::ordered_json::array();
  for (const auto& g : summary.groups) {
    nlohmann::ordered_json per = nlohmann::ordered_json::object();
    for (const auto& [rank, cb] : g.per_member) per[std::to_string(rank)] = count_json(cb);
    nlohmann::ordered_json j;
    // The implicit all-ranks group has no id of its own: null, so it cannot be taken for the
    // file's group 0.
    j["id"] = g.from_file() ? nlohmann::ordered_json(g.id) : nlohmann::ordered_json();
    j["defined_by"] = g.from_file() ? "comm-group file" : "all ranks (implicit)";
    j["pg_names"] = g.pg_names;
    j["members"] = g.members;
    j["collectives_per_member"] = std::move(per);
    j["consistent"] = g.consistent();
    groups.push_back(std::move(j));
  }
  out["process_groups"] = std::move(groups);
  return out;
}

}  // namespace etwire::inspect

// What `etwire inspect` reports about a trace set: per rank, the node mix, collectives and bytes
// by type, the process groups used and the dependency-graph depth; per process group, its
// members and the collectives they issue. Walking the graph through the feeder also validates it
// (cycles, dangling deps, duplicate ids).
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "trace/feeder/feeder.h"
#include "trace/node.h"
#include "trace/trace_set.h"

namespace etwire::inspect {

struct CountAndBytes {
  uint64_t count = 0;
  uint64_t bytes = 0;
  void add(uint64_t b) {
    ++count;
    bytes += b;
  }
};

struct RankSummary {
  int32_t rank = 0;
  std::string file;
  uint64_t nodes = 0;
  std::array<uint64_t, trace::kNodeTypeCount> nodes_by_type{};
  // Comm nodes that carry traffic vs CPU-side bookkeeping comm nodes (no comm_type/comm_size).
  uint64_t traffic_comm_nodes = 0;
  uint64_t bookkeeping_comm_nodes = 0;
  std::array<CountAndBytes, trace::kCollectiveTypeCount> collectives{};
  CountAndBytes sends;
  CountAndBytes recvs;
  // Bytes by node type: comm_size for comm nodes, tensor_size for memory nodes.
  std::array<uint64_t, trace::kNodeTypeCount> bytes_by_type{};
  uint64_t compute_us = 0;  // sum of COMP durations
  // pg_name as written ("" = absent) -> collectives and p2p on it.
  std::map<std::string, CountAndBytes> pg_names;
  uint64_t data_edges = 0;
  uint64_t ctrl_edges = 0;
  // Longest chain of data dependencies, in nodes (a lone node has depth 1; empty file 0).
  uint64_t depth = 0;
  feeder::FeederStats feeder;
};

struct GroupSummary {
  // The group as a replay keys it: a comm-group file id (0 included, when the file defines it) or
  // trace::kAllRanksGroup for the implicit all-ranks group; pg_name spellings seen for it ("1",
  // "1.0").
  int64_t id = trace::kAllRanksGroup;
  bool from_file() const { return id != trace::kAllRanksGroup; }
  std::vector<std::string> pg_names;
  std::vector<int32_t> members;
  // Per member rank: collectives issued on this group and their bytes.
  std::map<int32_t, CountAndBytes> per_member;
  // False when members issue different numbers of collectives on the group (a replay would
  // hang waiting for the missing ones).
  bool consistent() const;
};

struct TraceSummary {
  std::string spec;
  int32_t world_size = 0;
  std::string comm_groups_file;
  std::vector<RankSummary> ranks;
  std::vector<GroupSummary> groups;
};

struct SummaryOptions {
  feeder::FeederOptions feeder;
};

// Reads every rank once. Throws trace::TraceError on bad input.
TraceSummary summarize(const trace::TraceSet& set, const SummaryOptions& options = {});

nlohmann::ordered_json to_json(const TraceSummary& summary);
// Human-readable tables.
std::string to_text(const TraceSummary& summary);

}  // namespace etwire::inspect

#include "trace/node.h"

#include <algorithm>
#include <array>
#include <cctype>

namespace etwire::trace {

namespace {

constexpr std::array<std::string_view, kNodeTypeCount> kNodeTypeNames = {
    "INVALID_NODE", "METADATA_NODE",  "MEM_LOAD_NODE",  "MEM_STORE_NODE",
    "COMP_NODE",    "COMM_SEND_NODE", "COMM_RECV_NODE", "COMM_COLL_NODE",
};

constexpr std::array<std::string_view, kCollectiveTypeCount> kCollectiveNames = {
    "ALL_REDUCE", "REDUCE",         "ALL_GATHER",           "GATHER",  "SCATTER", "BROADCAST",
    "ALL_TO_ALL", "REDUCE_SCATTER", "REDUCE_SCATTER_BLOCK", "BARRIER",
};

// Upper-cases and drops '_', '-' and ' ' so that "all-reduce", "AllReduce" and "ALL_REDUCE"
// compare equal.
std::string fold(std::string_view text) {
  std::string out;
  for (char c : text) {
    if (c == '_' || c == '-' || c == ' ') continue;
    out += static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  }
  return out;
}

}  // namespace

std::string_view node_type_name(NodeType type) {
  auto i = static_cast<size_t>(type);
  return i < kNodeTypeNames.size() ? kNodeTypeNames[i] : "UNKNOWN_NODE";
}

std::string_view collective_type_name(CollectiveType type) {
  auto i = static_cast<size_t>(type);
  return i < kCollectiveNames.size() ? kCollectiveNames[i] : "UNKNOWN_COLLECTIVE";
}

std::optional<NodeType> parse_node_type(std::string_view text) {
  std::string folded = fold(text);
  for (size_t i = 0; i < kNodeTypeNames.size(); ++i) {
    std::string name = fold(kNodeTypeNames[i]);
    std::string bare = name.substr(0, name.size() - 4);  // without "NODE"
    if (folded == name || folded == bare) return static_cast<NodeType>(i);
  }
  return std::nullopt;
}

std::optional<CollectiveType> parse_collective_type(std::string_view text) {
  std::string folded = fold(text);
  for (size_t i = 0; i < kCollectiveNames.size(); ++i) {
    if (folded == fold(kCollectiveNames[i])) return static_cast<CollectiveType>(i);
  }
  return std::nullopt;
}

bool is_comm_type(NodeType type) {
  return type == NodeType::kCommSend || type == NodeType::kCommRecv || type == NodeType::kCommColl;
}

void IoInfo::reset() {
  present = false;
  values.clear();
  shapes.clear();
  types.clear();
}

void CommAttrs::reset() {
  coll_type.reset();
  size.reset();
  src.reset();
  dst.reset();
  tag.reset();
  priority.reset();
  pg_name.reset();  // keeps its buffer for the next node
  involved_dim.clear();
}

bool TraceNode::carries_traffic() const {
  switch (type) {
    case NodeType::kCommSend:
    case NodeType::kCommRecv:
      return comm.size.has_value();
    case NodeType::kCommColl:
      return comm.coll_type.has_value() &&
             (comm.size.has_value() || *comm.coll_type == CollectiveType::kBarrier);
    default:
      return false;
  }
}

void TraceNode::reset() {
  id = 0;
  name.clear();
  type = NodeType::kInvalid;
  data_deps.clear();
  ctrl_deps.clear();
  start_time_us = 0;
  duration_us = 0;
  is_cpu_op = false;
  tensor_size.reset();
  num_ops.reset();
  comm.reset();
  inputs.reset();
  outputs.reset();
  attrs.clear();
  record_index = 0;
}

}  // namespace etwire::trace

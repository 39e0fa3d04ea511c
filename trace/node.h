// The plain node struct every consumer of a Chakra trace sees. Readers fill it; the feeder, the
// engine and the tools read it. No protobuf type crosses this boundary.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "config/node_type.h"
#include "trace/attribute.h"

namespace etwire::trace {

using NodeType = config::NodeType;
using CollectiveType = config::CollectiveType;
inline constexpr int kNodeTypeCount = config::kNodeTypeCount;
inline constexpr int kCollectiveTypeCount = config::kCollectiveTypeCount;

// Schema names: "COMP_NODE", "ALL_REDUCE", ...
std::string_view node_type_name(NodeType type);
std::string_view collective_type_name(CollectiveType type);
// Accepts the schema name in any case, with or without the "_NODE" suffix.
std::optional<NodeType> parse_node_type(std::string_view text);
// Accepts "ALL_REDUCE", "all_reduce", "allreduce", "all-reduce" and likewise for every type.
std::optional<CollectiveType> parse_collective_type(std::string_view text);

bool is_comm_type(NodeType type);  // SEND, RECV or COLL

// Node.inputs / Node.outputs: Python-literal text kept as it is.
struct IoInfo {
  bool present = false;
  std::string values;
  std::string shapes;
  std::string types;
  void reset();
};

// Communication attributes decoded from `attr`, each with its presence. Every integer kind is
// accepted for integer-valued attributes (see docs/trace-format.md).
struct CommAttrs {
  // COMM_COLL only; the comm_type that p2p converters write on SEND/RECV nodes is ignored.
  std::optional<CollectiveType> coll_type;
  // Bytes as the trace states them (comm_size, or tensor_size where a p2p node has no
  // comm_size). nullopt when the trace gives neither: never a made-up value.
  std::optional<uint64_t> size;
  // Peer ranks as written. Where the trace leaves one end out, it is the file's own rank; that is
  // resolved by whoever knows the rank (the trace set), not here.
  std::optional<int32_t> src;
  std::optional<int32_t> dst;
  std::optional<int32_t> tag;
  std::optional<int32_t> priority;
  // pg_name as written (nullopt when absent); `comm_group` (legacy STG int32) is folded into it
  // as its decimal text when pg_name is absent.
  OptionalText pg_name;
  // One flag per network dimension; empty = all dimensions.
  std::vector<bool> involved_dim;

  void reset();
};

struct TraceNode {
  uint64_t id = 0;
  std::string name;
  NodeType type = NodeType::kInvalid;
  std::vector<uint64_t> data_deps;
  std::vector<uint64_t> ctrl_deps;
  uint64_t start_time_us = 0;
  uint64_t duration_us = 0;
  bool is_cpu_op = false;  // bool or any integer kind in the file
  std::optional<uint64_t> tensor_size;
  std::optional<int64_t> num_ops;
  CommAttrs comm;
  IoInfo inputs;
  IoInfo outputs;
  // Every attribute of the record, the decoded ones included, accessible by name.
  AttributeList attrs;
  // 0-based index of the record in its file (record 0 is the GlobalMetadata), or of the element
  // in a JSON file; used in error messages.
  uint64_t record_index = 0;

  // A comm node that should put bytes on the wire: a SEND/RECV with a size, or a collective with a
  // type (barriers carry no size). CPU-side bookkeeping comm nodes (PyTorch c10d calls without
  // comm_type/comm_size) are not.
  bool carries_traffic() const;

  // Clears every field, keeping buffer capacity for reuse.
  void reset();
};

// The first record of a binary trace (version plus attributes); JSON traces have none.
struct TraceMetadata {
  std::string version;
  AttributeList attrs;
};

}  // namespace etwire::trace

#include "trace/synth/node_builder.h"

namespace etwire::synth {

using trace::AttrKind;
using trace::TraceNode;

void add_bool_attr(TraceNode& node, const std::string& name, bool value) {
  auto& attr = node.attrs.append();
  attr.name = name;
  attr.kind = AttrKind::kBool;
  attr.bits = value ? 1 : 0;
  if (name == "is_cpu_op") node.is_cpu_op = value;
}

void add_bool_list_attr(TraceNode& node, const std::string& name, const std::vector<bool>& values) {
  auto& attr = node.attrs.append();
  attr.name = name;
  attr.kind = AttrKind::kBoolList;
  attr.int_list.assign(values.begin(), values.end());
  if (name == "involved_dim") node.comm.involved_dim = values;
}

void add_int64_attr(TraceNode& node, const std::string& name, int64_t value) {
  auto& attr = node.attrs.append();
  attr.name = name;
  attr.kind = AttrKind::kInt64;
  attr.bits = static_cast<uint64_t>(value);
  if (name == "comm_type") node.comm.coll_type = static_cast<trace::CollectiveType>(value);
  if (name == "comm_size") node.comm.size = static_cast<uint64_t>(value);
  if (name == "num_ops") node.num_ops = value;
}

void add_int32_attr(TraceNode& node, const std::string& name, int32_t value) {
  auto& attr = node.attrs.append();
  attr.name = name;
  attr.kind = AttrKind::kInt32;
  attr.bits = static_cast<uint64_t>(static_cast<int64_t>(value));
  if (name == "comm_src") node.comm.src = value;
  if (name == "comm_dst") node.comm.dst = value;
  if (name == "comm_tag") node.comm.tag = value;
  if (name == "comm_priority") node.comm.priority = value;
}

void add_string_attr(TraceNode& node, const std::string& name, const std::string& value) {
  auto& attr = node.attrs.append();
  attr.name = name;
  attr.kind = AttrKind::kString;
  attr.text = value;
  if (name == "pg_name") node.comm.pg_name = value;
}

void start_node(TraceNode& node, uint64_t id, trace::NodeType type, const std::string& name) {
  node.reset();
  node.id = id;
  node.type = type;
  node.name = name;
  add_bool_attr(node, "is_cpu_op", false);
}

void make_collective(TraceNode& node, trace::CollectiveType type, uint64_t bytes,
                     const std::optional<std::string>& pg_name) {
  add_int64_attr(node, "comm_type", static_cast<int64_t>(type));
  add_int64_attr(node, "comm_size", static_cast<int64_t>(bytes));
  if (pg_name) add_string_attr(node, "pg_name", *pg_name);
}

void make_send(TraceNode& node, int32_t self, int32_t peer, uint64_t bytes, int32_t tag) {
  add_int32_attr(node, "comm_src", self);
  add_int32_attr(node, "comm_dst", peer);
  add_int32_attr(node, "comm_tag", tag);
  add_int64_attr(node, "comm_size", static_cast<int64_t>(bytes));
}

void make_recv(TraceNode& node, int32_t self, int32_t peer, uint64_t bytes, int32_t tag) {
  add_int32_attr(node, "comm_src", peer);
  add_int32_attr(node, "comm_dst", self);
  add_int32_attr(node, "comm_tag", tag);
  add_int64_attr(node, "comm_size", static_cast<int64_t>(bytes));
}

}  // namespace etwire::synth

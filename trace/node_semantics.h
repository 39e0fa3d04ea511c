// What a decoded node means beyond its raw fields: the node type is checked and the well-known
// attributes (comm_type, comm_size, pg_name, is_cpu_op, ...) are read into TraceNode's typed
// fields. Every reader (binary, feeder JSON, jsonizer dump) runs this same code after decoding, so
// all formats obey the same rules; docs/trace-format.md states them.
#pragma once

#include <cstdint>
#include <string>

#include "trace/node.h"

namespace etwire::trace {

// A comm_size (or the tensor_size standing in for it) above this is treated as corruption: 1 TiB
// in one operation is beyond any real workload.
inline constexpr uint64_t kMaxCommBytes = uint64_t{1} << 40;

// `raw_type` is Node.type as stored (possibly out of range). `node` must hold the raw fields, the
// attributes and the record index. Fills type, is_cpu_op, tensor_size, num_ops and comm. Throws
// TraceError naming `file`, the record index and the node id.
void apply_node_semantics(TraceNode& node, int64_t raw_type, const std::string& file);

}  // namespace etwire::trace

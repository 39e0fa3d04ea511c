// Reader for chakra's "feeder JSON": one document {"workload_graph": [ {node}, ... ]} with keys
// Id, Name, NodeType, data_deps, ctrlDeps, runtime, is_cpu_op and the comm_* keys. The comm keys
// become int64 attributes, as a binary trace would carry them, and then go through the same node
// semantics as the binary reader.
#pragma once

#include <cstdint>
#include <memory>

#include "trace/byte_source.h"
#include "trace/node_source.h"

namespace etwire::trace {

// The largest feeder JSON read, since it is parsed whole: fifty times the largest published one
// (5 MB), and a parsed document takes several times its text in memory.
inline constexpr uint64_t kMaxFeederJsonBytes = uint64_t{256} << 20;

// Parses the whole document at once (JSON traces are small test inputs; binary traces are the
// scalable format). Throws TraceError on invalid JSON, a missing "workload_graph" array or a
// document larger than kMaxFeederJsonBytes.
// record_index of a node is its index in workload_graph.
std::unique_ptr<NodeSource> make_feeder_json_reader(std::unique_ptr<ByteSource> bytes);

}  // namespace etwire::trace

// A stream of the nodes of one rank's trace file, in file order. Implementations: the binary .et
// reader (plain or gzip) and the two JSON readers. open_node_source() picks one by content.
#pragma once

#include <memory>
#include <string>

#include "trace/node.h"

namespace etwire::trace {

class NodeSource {
 public:
  virtual ~NodeSource() = default;
  // Decodes the next node into `out` (reusing its buffers). Returns false at the clean end of the
  // file. Throws TraceError on bad input, naming the file, record index and node id.
  virtual bool next(TraceNode& out) = 0;
  virtual const TraceMetadata& metadata() const = 0;
  virtual const std::string& path() const = 0;
};

enum class TraceFormat {
  kAuto,          // by content: gzip magic, then '{' for JSON, else binary
  kBinary,        // length-delimited protobuf records, plain or gzip
  kFeederJson,    // {"workload_graph": [...]}
  kJsonizerDump,  // concatenated canonical-JSON GlobalMetadata and Node objects
};

// Opens a trace file. Throws TraceError if it cannot be opened or its format is not recognised.
std::unique_ptr<NodeSource> open_node_source(const std::string& path,
                                             TraceFormat format = TraceFormat::kAuto);

}  // namespace etwire::trace

// Writes trace files from plain nodes: the binary .et format (plain or gzip) and the feeder JSON.
// Binary output is serialised by libprotobuf from the project's own schema, so it is an encoder
// independent of the hand-written decoder that reads it back.
#pragma once

#include <memory>
#include <string>

#include "trace/node.h"

namespace etwire::trace {

enum class WriteFormat { kBinary, kBinaryGzip, kFeederJson };

class TraceWriter {
 public:
  virtual ~TraceWriter() = default;
  // Writes a node: id, name, type, deps, times, inputs/outputs and every attribute in `attrs`
  // (the decoded comm fields are not consulted by binary output: attrs are the source of truth).
  virtual void write(const TraceNode& node) = 0;
  // Flushes and closes; throws std::runtime_error naming the file if anything failed.
  virtual void close() = 0;
};

// Creates the file and writes the GlobalMetadata record (binary formats). Throws
// std::runtime_error naming the file when it cannot be created.
std::unique_ptr<TraceWriter> open_trace_writer(const std::string& path, WriteFormat format,
                                               const TraceMetadata& metadata);

}  // namespace etwire::trace

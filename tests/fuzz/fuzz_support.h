// What the fuzz targets share: the input as a file (the trace readers read files, never buffers),
// and reading a trace to its end. Fuzz targets are top-level consumers, like the tests: they may
// use any layer.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "trace/node_source.h"

namespace etwire::fuzz {

// Puts the bytes in one anonymous in-memory file of this process (memfd) and returns a path that
// opens it. Each call replaces the previous contents; the path stays the same.
const std::string& input_as_file(const uint8_t* data, size_t size);

// Reads every node of `source` and touches what a consumer would: the metadata, each node's
// attributes and dependencies. Stops after a cap on nodes so an input can never run long.
void read_all_nodes(trace::NodeSource& source);

}  // namespace etwire::fuzz

// Tells the trace formats apart by content, for TraceFormat::kAuto.
#pragma once

#include "trace/byte_source.h"
#include "trace/node_source.h"

namespace etwire::trace {

// Looks at the start of `bytes` without consuming anything:
//  - a gzip stream is a binary trace;
//  - '{' as the first non-whitespace byte, followed by a quoted key and ':' (or by '}'), is JSON:
//    the feeder JSON when its first object has a top-level "workload_graph" key, else a jsonizer
//    dump;
//  - another JSON value standing for the whole file (an array such as [] or [{...}], null, true,
//    false) goes to the feeder JSON reader, which says it is not a trace;
//  - anything else is a binary trace.
// Checking past the '{' keeps a binary trace whose GlobalMetadata record happens to be 123 bytes
// long (0x7B is '{') from passing as JSON.
TraceFormat sniff_trace_format(ByteSource& bytes);

}  // namespace etwire::trace

// Reader for the jsonizer dump: protobuf's canonical JSON of the GlobalMetadata followed by every
// Node, concatenated. Each object goes through libprotobuf's JSON parser into the generated
// messages and then through proto_convert, so field names, enum names and 64-bit-integers-as-
// strings follow protobuf's own JSON mapping exactly.
#pragma once

#include <memory>

#include "trace/byte_source.h"
#include "trace/node_source.h"

namespace etwire::trace {

// Reads the GlobalMetadata object at once; throws TraceError when it is missing or malformed.
// Object i is record i: nodes start at 1, as in binary traces.
std::unique_ptr<NodeSource> make_jsonizer_reader(std::unique_ptr<ByteSource> bytes);

}  // namespace etwire::trace

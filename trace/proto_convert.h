// Conversion from libprotobuf's generated Chakra messages to the plain structs of node.h. Used by
// the jsonizer-dump reader (protobuf's JSON parser produces messages); the binary reader decodes
// wire bytes directly and never builds these messages.
#pragma once

#include <cstdint>
#include <string>

#include "trace/node.h"

namespace ChakraProtoMsg {
class AttributeProto;
class GlobalMetadata;
class Node;
}  // namespace ChakraProtoMsg

namespace etwire::trace {

void attribute_from_proto(const ChakraProtoMsg::AttributeProto& in, Attribute& out);

void metadata_from_proto(const ChakraProtoMsg::GlobalMetadata& in, TraceMetadata& out);

// Resets `out`, copies the raw fields and attributes, then applies the same node semantics as the
// binary reader (node_semantics.h). Throws TraceError naming `file`, `record_index` and the id.
void node_from_proto(const ChakraProtoMsg::Node& in, uint64_t record_index, const std::string& file,
                     TraceNode& out);

}  // namespace etwire::trace

// Decodes the Chakra protobuf messages (Node, GlobalMetadata and what they contain) straight from
// wire bytes into the plain structs of node.h. This replaces libprotobuf on the hot path: it fills
// the caller's reused TraceNode in place, so once buffers have grown to the largest node no
// allocation happens per node. Only the raw fields are filled here; node_semantics.h interprets
// the well-known attributes.
#pragma once

#include <cstddef>
#include <cstdint>

#include "trace/node.h"

namespace etwire::trace::wire {

// What decode_node learns that TraceNode has no room for.
struct NodeDecodeState {
  // Node.type as stored (an open enum: any int32 may appear); checked later.
  int32_t raw_type = 0;
  // Whether Node.id was on the wire, so that errors name the node only when it is known.
  bool id_seen = false;
};

// Decodes a Node record body into `out`, which the caller has reset. Throws WireError.
void decode_node(const uint8_t* data, size_t size, TraceNode& out, NodeDecodeState& state);

// Decodes a GlobalMetadata record body into `out` (cleared first). Throws WireError.
void decode_metadata(const uint8_t* data, size_t size, TraceMetadata& out);

}  // namespace etwire::trace::wire

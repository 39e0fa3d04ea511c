// A notification from the transport, queued to be handled outside the transport's call stack: a
// message reached its receiver, or a send finished (acknowledged or failed). No completion then
// re-enters the transport from inside its own callback.
#pragma once

#include <cstdint>

namespace etwire::engine {

struct FlowEvent {
  bool delivered = false;  // else: the send finished (acknowledged or failed)
  uint64_t instance = 0;
  int32_t src_rank = 0;
  int32_t dst_rank = 0;
  uint16_t qp = 0;
  uint32_t op = 0;     // sender's chunk operation
  uint32_t index = 0;  // position on the channel
  // A delivery of a message posted by another emulator process: its instance's wire hash (the
  // instance is then found by it) and job; 0 otherwise.
  uint32_t wire_hash = 0;
  uint32_t job = 0;
};

}  // namespace etwire::engine

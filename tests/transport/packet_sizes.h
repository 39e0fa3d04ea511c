// Wire bytes of a RoCE packet by opcode and payload, for tests that compute expected times.
#pragma once

#include <cstdint>

#include "nic/frame_size.h"

namespace etwire::transport::testing {

inline uint32_t wire_bytes_of(uint8_t op, uint32_t payload) {
  nic::Packet packet;
  packet.opcode = op;
  packet.payload_bytes = payload;
  return nic::wire_bytes(packet, {});
}

}  // namespace etwire::transport::testing

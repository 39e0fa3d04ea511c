// How a message tells a receiver in another emulator process which collective instance it belongs
// to. Such a receiver never sees the sender's flow tags, only the immediate of the message's last
// packet (WRITE or SEND WITH IMMEDIATE); the sender puts there a hash of the instance's key, the
// same on every process, and whether the message is the last of its chunk operation. Messages of
// one instance on one connection arrive in the order they were posted, so the receiver counts
// them per channel (sender, receiver, QP) to find each one's place in its step program.
#pragma once

#include <cstdint>

#include "engine/instance_key.h"

namespace etwire::engine {

// Bits 0-30: the instance's hash, never 0; bit 31: the last message of a chunk operation.
uint32_t instance_wire_hash(const InstanceKey& key);
inline uint32_t wire_tag(uint32_t instance_hash, bool last) {
  return instance_hash | (last ? 0x80000000u : 0u);
}
inline uint32_t wire_tag_instance(uint32_t tag) {
  return tag & 0x7FFFFFFFu;
}
inline bool wire_tag_last(uint32_t tag) {
  return (tag & 0x80000000u) != 0;
}

}  // namespace etwire::engine

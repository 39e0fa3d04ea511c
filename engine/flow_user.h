// What the engine keeps in a message's flow tags (FlowTags::user) to know it again when the
// transport reports it: the sender's chunk operation (bits 0-31), its position on the channel
// (bits 32-62) and whether the flow is the last message of the chunk operation (bit 63).
#pragma once

#include <cstdint>

namespace etwire::engine {

inline uint64_t pack_user(uint32_t op, uint32_t index, bool last) {
  return uint64_t{op} | (uint64_t{index & 0x7FFFFFFFu} << 32) | (uint64_t{last} << 63);
}
inline uint32_t user_op(uint64_t user) {
  return static_cast<uint32_t>(user);
}
inline uint32_t user_index(uint64_t user) {
  return static_cast<uint32_t>(user >> 32) & 0x7FFFFFFFu;
}
inline bool user_last(uint64_t user) {
  return (user >> 63) != 0;
}

}  // namespace etwire::engine

// The transport's scheduler events: a kind in the top byte of the tag and the index of the port
// or QP it concerns below, so one EventHandler serves every port and QP without allocation.
#pragma once

#include <cstdint>

namespace etwire::transport::event_tag {

enum class Kind : uint8_t {
  kPortKick,         // a port may be able to start a packet (wire free, pause over)
  kPacerWake,        // a paced QP may send again
  kRetransmitTimer,  // a QP's retransmission deadline may have passed
};

inline uint64_t make(Kind kind, uint32_t index) {
  return (uint64_t{static_cast<uint8_t>(kind)} << 56) | index;
}
inline Kind kind(uint64_t tag) {
  return static_cast<Kind>(tag >> 56);
}
inline uint32_t index(uint64_t tag) {
  return static_cast<uint32_t>(tag);
}

}  // namespace etwire::transport::event_tag

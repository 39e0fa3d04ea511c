// Packet sequence numbers are 24 bits on the wire and wrap every 16M packets; inside the
// transport they are 64-bit counters that never wrap. A 24-bit PSN from the wire is widened to
// the 64-bit value nearest to a reference the receiver knows (its expected PSN, or the oldest
// unacknowledged one), which is exact as long as the two are within 8M packets of each other:
// always, since a QP never has that many packets in flight.
#pragma once

#include <cstdint>

#include "nic/packet.h"

namespace etwire::transport {

inline uint32_t wire_psn(uint64_t psn) {
  return static_cast<uint32_t>(psn) & nic::kPsnMask;
}

inline uint64_t widen_psn(uint32_t wire, uint64_t reference) {
  // The 24-bit difference, read as signed.
  int32_t delta = static_cast<int32_t>((wire - static_cast<uint32_t>(reference)) & nic::kPsnMask);
  if (delta >= (1 << 23)) delta -= (1 << 24);
  return reference + static_cast<int64_t>(delta);
}

}  // namespace etwire::transport

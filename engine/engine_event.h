// The run engine's own events on the scheduler: the kind in the top two bits of the tag, its
// payload below. One definition for every file of the engine that schedules or handles them.
#pragma once

#include <cstdint>

namespace etwire::engine::engine_event {

inline constexpr uint64_t kKindShift = 62;
inline constexpr uint64_t kDrain = 1;        // queued flow events to handle
inline constexpr uint64_t kComputeDone = 2;  // payload: runtime << 32 | feeder slot
inline constexpr uint64_t kLocalDone = 3;    // payload: local transfer slot

inline uint64_t tag(uint64_t kind, uint64_t payload) {
  return (kind << kKindShift) | payload;
}
inline uint64_t kind(uint64_t tag) {
  return tag >> kKindShift;
}
inline uint64_t payload(uint64_t tag) {
  return tag & ((uint64_t{1} << kKindShift) - 1);
}

}  // namespace etwire::engine::engine_event

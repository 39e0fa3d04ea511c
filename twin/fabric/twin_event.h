// The scheduler tags of the fabric twin's events (scheduler.h: handlers pack what they need into
// the 64-bit tag, so an event costs no allocation and no lookup). The kind sits in the top byte;
// the operands below it. Index widths: switch ports and cables below 2^28 (the layout checks),
// so links below 2^29; generations wrap at 24 bits and are only compared for equality.
#pragma once

#include <cstdint>

namespace etwire::twin {

enum class TwinEvent : uint8_t {
  kFrameArrival = 1,  // link, slot hint: the oldest packet in flight on it arrives
  kEgressWake,        // switch port, generation: its wire is free or a pause expired
  kPauseArrival,      // link, priority, quanta: a PFC frame arrives (it carries nothing else)
  kPauseRefresh,      // switch port x 8 + priority, generation: re-send a pause still needed
  kStormTick,         // storm index: a NIC port in a PFC storm sends its next pause
  kCableState,        // cable, up: a scheduled link down/up
  kRouteState,        // cable, up: the fabric's routing learns of a link down/up
  kFault,             // fault index x 2 + 1 when it ends: a configured fault starts or ends
};

namespace twin_tag {

inline constexpr int kKindShift = 56;
inline constexpr uint64_t kPayloadMask = (uint64_t{1} << kKindShift) - 1;
inline constexpr uint32_t kGenerationMask = (1u << 24) - 1;

constexpr uint64_t make(TwinEvent kind, uint64_t payload) {
  return (static_cast<uint64_t>(kind) << kKindShift) | payload;
}
constexpr TwinEvent kind(uint64_t tag) {
  return static_cast<TwinEvent>(tag >> kKindShift);
}
constexpr uint64_t payload(uint64_t tag) {
  return tag & kPayloadMask;
}

// kEgressWake and kPauseRefresh: an index and a 24-bit generation.
constexpr uint64_t with_generation(uint64_t index, uint32_t generation) {
  return (static_cast<uint64_t>(generation & kGenerationMask) << 32) | index;
}
constexpr uint32_t index_of(uint64_t payload) {
  return static_cast<uint32_t>(payload);
}
constexpr uint32_t generation_of(uint64_t payload) {
  return static_cast<uint32_t>(payload >> 32) & kGenerationMask;
}

// A frame arrival: the link in the low 32 bits, and above them the frame's slot in the packet
// pool plus one when that fits 24 bits (else 0). The slot is only a hint, for prefetch(), which
// starts loading the frame while the event before it runs; the arrival takes the link's oldest.
constexpr uint64_t frame_arrival(uint32_t link, uint32_t slot) {
  const uint64_t hint = slot < kGenerationMask ? uint64_t{slot} + 1 : 0;
  return (hint << 32) | link;
}
constexpr uint32_t link_of_arrival(uint64_t payload) {
  return static_cast<uint32_t>(payload);
}
// The slot the hint names plus one; 0 when there is none.
constexpr uint32_t slot_hint_of_arrival(uint64_t payload) {
  return static_cast<uint32_t>(payload >> 32) & kGenerationMask;
}

// kPauseArrival: link (bits 0..31), priority (32..34), quanta (35..50).
constexpr uint64_t pause_frame(uint32_t link, uint8_t priority, uint16_t quanta) {
  return link | (static_cast<uint64_t>(priority & 7u) << 32) |
         (static_cast<uint64_t>(quanta) << 35);
}
constexpr uint8_t pause_priority(uint64_t payload) {
  return static_cast<uint8_t>((payload >> 32) & 7u);
}
constexpr uint16_t pause_quanta(uint64_t payload) {
  return static_cast<uint16_t>(payload >> 35);
}

}  // namespace twin_tag

}  // namespace etwire::twin

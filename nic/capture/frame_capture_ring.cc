#include "nic/capture/frame_capture_ring.h"

#include <algorithm>
#include <stdexcept>

namespace etwire::nic::capture {

uint32_t FrameCaptureRing::slots_within(uint64_t budget_bytes, uint32_t snap_length,
                                        uint32_t max_slots) {
  const uint64_t fit = budget_bytes / slot_bytes(snap_length);
  uint32_t slots = max_slots;
  while (slots > 1 && slots > fit) slots /= 2;
  return std::max(slots, std::min(kMinSlots, max_slots));
}

FrameCaptureRing::FrameCaptureRing(uint32_t slots, uint32_t snap_length)
    : mask_(slots - 1), snap_length_(snap_length) {
  if (slots == 0 || (slots & mask_) != 0) {
    throw std::invalid_argument("capture ring: slots must be a power of two");
  }
  if (snap_length == 0) throw std::invalid_argument("capture ring: snap length 0");
  bytes_ = std::make_unique<uint8_t[]>(static_cast<size_t>(slots) * snap_length);
  headers_ = std::make_unique<Header[]>(slots);
}

}  // namespace etwire::nic::capture

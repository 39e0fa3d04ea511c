#include "nic/capture/frame_capture_ring.h"

#include <stdexcept>

namespace etwire::nic::capture {

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

// PFC ingress accounting of one switch port (IEEE 802.1Qbb as switches implement it): per
// lossless class, the bytes that arrived on this port and are still held anywhere in the switch.
// Crossing XOFF means "pause the device upstream of this port on this class"; falling back to
// XON means "let it resume". The account is per ingress port because a pause can only stop the
// one link partner that sent the bytes.
#pragma once

#include <array>
#include <cstdint>

#include "config/fabric_config.h"

namespace etwire::twin {

class PfcIngress {
 public:
  PfcIngress() = default;  // PFC off: no class is lossless
  explicit PfcIngress(const config::PfcConfig& config);

  bool lossless(uint8_t priority) const { return (lossless_mask_ >> priority) & 1u; }
  bool pausing(uint8_t priority) const { return pausing_[priority]; }
  uint64_t held_bytes(uint8_t priority) const { return held_bytes_[priority]; }

  // Counts bytes in; true when the class has just gone above XOFF (send a pause upstream).
  bool add(uint8_t priority, uint32_t bytes) {
    held_bytes_[priority] += bytes;
    if (pausing_[priority] || held_bytes_[priority] <= xoff_bytes_) return false;
    pausing_[priority] = true;
    ++generation_[priority];
    return true;
  }

  // Counts bytes out; true when a paused class has just drained to XON (send a resume).
  bool remove(uint8_t priority, uint32_t bytes) {
    held_bytes_[priority] -= bytes;
    if (!pausing_[priority] || held_bytes_[priority] > xon_bytes_) return false;
    pausing_[priority] = false;
    ++generation_[priority];
    return true;
  }

  // Changes at every pause and resume: a refresh timer armed for an older pause period sees a
  // different value and knows it is stale.
  uint32_t generation(uint8_t priority) const { return generation_[priority]; }

 private:
  uint8_t lossless_mask_ = 0;
  uint64_t xoff_bytes_ = 0;
  uint64_t xon_bytes_ = 0;
  std::array<uint64_t, 8> held_bytes_{};
  std::array<bool, 8> pausing_{};
  std::array<uint32_t, 8> generation_{};
};

}  // namespace etwire::twin

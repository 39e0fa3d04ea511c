// The synthetic payload every data packet carries, with its CRC precomputed.
//
// Byte i of the pattern is (i mod 256): a counting ramp, easy to recognise in a capture and
// identical in every packet, because the emulator's data is synthetic (nic/packet.h). A packet
// of P payload bytes carries the first P pattern bytes and, as its 0-3 pad bytes, the pattern
// bytes that follow (not zeros). Payload and pad are then always a prefix of the pattern, so a
// transmit buffer can be filled once and reused for any length, and the ICRC's payload part is a
// table entry.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "nic/frame/icrc.h"

namespace etwire::frame {

class PayloadPattern {
 public:
  // max_payload: the largest payload (the pattern holds 3 more bytes for the pad). fast_length:
  // the payload length (normally the PMTU) whose padded length gets a dedicated shift table.
  // Throws std::invalid_argument if fast_length exceeds max_payload.
  PayloadPattern(uint32_t max_payload, uint32_t fast_length);

  static uint8_t byte_at(size_t index) { return static_cast<uint8_t>(index); }

  const uint8_t* bytes() const { return bytes_.data(); }
  size_t size() const { return bytes_.size(); }
  uint32_t max_payload() const { return max_payload_; }
  uint32_t fast_length() const { return fast_length_; }

  // The raw register advanced from 0 over the first `length` pattern bytes (length <= size()).
  uint32_t contribution(size_t length) const { return contributions_[length]; }

  // The register advanced over `length` zero bytes (length <= size()): one table application for
  // the fast length, else one per set bit of `length`.
  uint32_t shift(uint32_t reg, size_t length) const {
    if (length == fast_padded_) return fast_(reg);
    while (length != 0) {
      reg = powers_[static_cast<size_t>(__builtin_ctzll(length))](reg);
      length &= length - 1;
    }
    return reg;
  }

  // The register `reg` advanced over the first `length` pattern bytes (length <= size()).
  uint32_t extend(uint32_t reg, size_t length) const {
    return shift(reg, length) ^ contributions_[length];
  }

 private:
  uint32_t max_payload_;
  uint32_t fast_length_;
  size_t fast_padded_;
  std::vector<uint8_t> bytes_;
  std::vector<uint32_t> contributions_;  // size() + 1 entries
  std::vector<CrcShift> powers_;         // powers_[i] shifts over 2^i bytes, 2^i <= size()
  CrcShift fast_;
};

}  // namespace etwire::frame

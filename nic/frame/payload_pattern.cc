#include "nic/frame/payload_pattern.h"

#include <stdexcept>

namespace etwire::frame {

PayloadPattern::PayloadPattern(uint32_t max_payload, uint32_t fast_length)
    : max_payload_(max_payload),
      fast_length_(fast_length),
      fast_padded_((static_cast<size_t>(fast_length) + 3) & ~size_t{3}) {
  if (fast_length > max_payload) {
    throw std::invalid_argument("PayloadPattern: fast_length exceeds max_payload");
  }
  bytes_.resize(static_cast<size_t>(max_payload) + 3);
  for (size_t i = 0; i < bytes_.size(); ++i) bytes_[i] = byte_at(i);

  contributions_.resize(bytes_.size() + 1);
  contributions_[0] = 0;
  for (size_t i = 0; i < bytes_.size(); ++i) {
    contributions_[i + 1] = crc32_update(contributions_[i], &bytes_[i], 1);
  }

  powers_.emplace_back(1);
  while ((size_t{1} << powers_.size()) <= bytes_.size()) {
    powers_.push_back(CrcShift::compose(powers_.back(), powers_.back()));
  }
  fast_ = CrcShift(fast_padded_);
}

}  // namespace etwire::frame

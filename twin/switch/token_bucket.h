// The token bucket of a shaped switch egress port (fabric.shaper): tokens fill at the shaper's
// rate up to its burst, and a frame starts once the bucket holds its bytes. The bucket starts
// full, as Linux tbf's does. Tokens are counted in bytes x 8e9, so that a nanosecond at R bit/s
// adds exactly R of them: no rounding accumulates however long a run lasts.
#pragma once

#include <algorithm>
#include <cstdint>

#include "clock/time.h"
#include "config/fabric_config.h"

namespace etwire::twin {

class TokenBucket {
 public:
  static constexpr uint64_t kUnitsPerByte = 8'000'000'000ull;
  // A bucket of this many bytes still counts in 64 bits (the configuration's bound).
  static constexpr uint64_t kMaxBurstBytes = UINT64_MAX / kUnitsPerByte;

  TokenBucket() = default;  // no shaper: every frame may start at once
  TokenBucket(const config::Shaper& shaper, clock::Nanos start)
      : rate_bps_(shaper.rate_bps),
        capacity_(std::min(shaper.burst_bytes, kMaxBurstBytes) * kUnitsPerByte),
        tokens_(capacity_),
        filled_at_(start) {}

  bool shapes() const { return rate_bps_ != 0; }

  // When a frame of `bytes` may start, `now` or later: once the bucket holds its bytes (or is
  // full, for a frame larger than the bucket, which the configuration checks refuse).
  clock::Nanos ready_at(uint32_t bytes, clock::Nanos now) {
    fill(now);
    const uint64_t need = needed(bytes);
    if (tokens_ >= need) return now;
    const uint64_t missing = need - tokens_;
    return now + static_cast<clock::Nanos>((missing + rate_bps_ - 1) / rate_bps_);
  }

  // Takes a starting frame's bytes (at most what the bucket holds).
  void take(uint32_t bytes) {
    const uint64_t need = needed(bytes);
    tokens_ = tokens_ >= need ? tokens_ - need : 0;
  }

 private:
  uint64_t needed(uint32_t bytes) const {
    return std::min(uint64_t{bytes} * kUnitsPerByte, capacity_);
  }
  void fill(clock::Nanos now) {
    if (now <= filled_at_) return;
    const auto elapsed = static_cast<uint64_t>(now - filled_at_);
    filled_at_ = now;
    const uint64_t room = capacity_ - tokens_;
    tokens_ = elapsed >= room / rate_bps_ + 1 ? capacity_ : tokens_ + elapsed * rate_bps_;
    tokens_ = std::min(tokens_, capacity_);
  }

  uint64_t rate_bps_ = 0;
  uint64_t capacity_ = 0;
  uint64_t tokens_ = 0;
  clock::Nanos filled_at_ = 0;
};

}  // namespace etwire::twin

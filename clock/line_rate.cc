#include "clock/line_rate.h"

namespace etwire::clock {

namespace {
// bytes x 8 bits x 1e9 ns/s: the numerator of a duration whose denominator is the rate in bit/s.
// 128-bit so that no realistic byte count can overflow it.
unsigned __int128 bit_nanos(uint64_t bytes) {
  return static_cast<unsigned __int128>(bytes) * 8u * static_cast<uint64_t>(kNanosPerSecond);
}
}  // namespace

void LineRateTimer::set_rate(uint64_t rate_bps) {
  if (rate_bps == rate_bps_) return;
  if (end_fraction_ != 0) {
    ++end_ns_;
    end_fraction_ = 0;
  }
  rate_bps_ = rate_bps;
  last_bytes_ = UINT32_MAX;  // durations were in the old rate
}

void LineRateTimer::remember_duration(uint32_t bytes) {
  last_bytes_ = bytes;
  // A link carrying data one way and acknowledgements for the other comes here at every change
  // of size: below 2^31 bytes the numerator fits 64 bits, and one hardware division replaces a
  // call to the 128-bit one.
  if (bytes < (uint32_t{1} << 31)) {
    const uint64_t total = uint64_t{bytes} * 8u * static_cast<uint64_t>(kNanosPerSecond);
    last_whole_ns_ = static_cast<Nanos>(total / rate_bps_);
    last_fraction_ = total % rate_bps_;
    return;
  }
  const unsigned __int128 total = bit_nanos(bytes);
  last_whole_ns_ = static_cast<Nanos>(total / rate_bps_);
  last_fraction_ = static_cast<uint64_t>(total % rate_bps_);
}

Nanos LineRateTimer::duration(uint64_t bytes, uint64_t rate_bps) {
  const unsigned __int128 total = bit_nanos(bytes);
  return static_cast<Nanos>((total + rate_bps - 1) / rate_bps);
}

}  // namespace etwire::clock

// Time to put bytes on a wire at a rate, exact over any number of packets. Each packet's
// duration is rarely a whole number of nanoseconds (4178 bytes at 100 Gb/s is 334.24 ns), and
// rounding each packet would drift by up to a nanosecond per packet over a long flow. The timer
// therefore carries the sub-nanosecond remainder from one packet to the next and reports the end
// of each packet rounded up to the next nanosecond, the first instant the bytes are all out.
#pragma once

#include <cstdint>

#include "clock/time.h"

namespace etwire::clock {

class LineRateTimer {
 public:
  LineRateTimer() = default;
  explicit LineRateTimer(uint64_t rate_bps) : rate_bps_(rate_bps) {}

  uint64_t rate_bps() const { return rate_bps_; }
  // A new rate applies to the next packet. The remainder carried so far is rounded up to a whole
  // nanosecond (at most 1 ns once per change) because it was counted in the old rate's units.
  void set_rate(uint64_t rate_bps);

  // Starts `bytes` at `earliest` or when the previous packet ends, whichever is later, and
  // returns when its last byte is out (rounded up to the nanosecond). A packet requested at
  // free_at() or earlier continues from the previous packet's exact end. Inline and without a
  // division while packets keep one size (the steady state of a flow): the duration of the
  // last size is kept as whole nanoseconds and a remainder in the rate's units.
  Nanos transmit(Nanos earliest, uint32_t bytes) {
    if (earliest > free_at()) {
      // The wire was idle: the packet starts on a nanosecond boundary. Starting exactly at
      // free_at() counts as back to back (the wire was never idle for a whole nanosecond),
      // which is what keeps a sender that waits for free_at() before each packet free of drift.
      end_ns_ = earliest;
      end_fraction_ = 0;
    }
    if (bytes != last_bytes_) remember_duration(bytes);
    end_ns_ += last_whole_ns_;
    // Both parts are below the rate, so one carry at most.
    end_fraction_ += last_fraction_;
    if (end_fraction_ >= rate_bps_) {
      end_fraction_ -= rate_bps_;
      ++end_ns_;
    }
    return free_at();
  }

  // When the last packet ends (rounded up); the wire is free from then on.
  Nanos free_at() const { return end_ns_ + (end_fraction_ != 0 ? 1 : 0); }

  // The whole-nanosecond duration of `bytes` at `rate_bps`, rounded up; for reading and tests.
  static Nanos duration(uint64_t bytes, uint64_t rate_bps);

 private:
  uint64_t rate_bps_ = 0;
  // The exact end of the last packet: end_ns_ + end_fraction_ / rate_bps_ nanoseconds.
  Nanos end_ns_ = 0;
  uint64_t end_fraction_ = 0;
  // The duration of `last_bytes_` at the rate: last_whole_ns_ + last_fraction_ / rate_bps_.
  void remember_duration(uint32_t bytes);
  Nanos last_whole_ns_ = 0;
  uint64_t last_fraction_ = 0;
  // Last, so that an owner may put a 4-byte member in the tail padding ([[no_unique_address]]):
  // a timer paces every requester QP. UINT32_MAX: none yet (no packet is that long).
  uint32_t last_bytes_ = UINT32_MAX;
};

}  // namespace etwire::clock

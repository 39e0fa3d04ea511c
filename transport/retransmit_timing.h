// The arithmetic of transport.retransmission (config/transport_config.h): how long a requester
// waits for an acknowledgement before it goes back, and, for adaptive retransmission, how it
// tells that a connection has gone too long without progress. Read from the configuration at
// each use, not cached: the software RNIC sets a port's timeout and retry count when its first
// QP is connected, after the transport is built.
#pragma once

#include <algorithm>
#include <bit>
#include <cstdint>

#include "clock/time.h"
#include "config/transport_config.h"

namespace etwire::transport::retransmit_timing {

// The shortest timeout armed after progress: adaptive, the first timeout before its per-QP spread
// (configured, else a quarter of the QP's timeout); fixed, the QP's timeout.
inline uint64_t first_timeout(const config::TransportConfig& config) {
  const uint64_t cap = config.retransmit_timeout_ns;
  if (config.retransmission == config::Retransmission::kFixed) return cap;
  return config.adaptive_first_timeout_ns == 0 ? std::max<uint64_t>(cap / 4, 1)
                                               : std::min(config.adaptive_first_timeout_ns, cap);
}

// Whether a requester sending `wire_bytes` frames at `rate_bps` must ask for an acknowledgement
// on every packet: ack_interval of them would take over half the first timeout, so an
// acknowledgement every ack_interval packets would come after the timer fired on data that is
// only slow (DCQCN holding the QP near min_rate). Multiplications only: it is asked per packet.
inline bool acknowledge_every_packet(const config::TransportConfig& config, uint64_t wire_bytes,
                                     double rate_bps) {
  return config.ack_interval > 1 &&
         static_cast<double>(config.ack_interval) * static_cast<double>(wire_bytes) * 16e9 >
             rate_bps * static_cast<double>(first_timeout(config));
}

// The timeout to arm after `retries` timeouts without progress (0: since the last progress).
// Adaptive: a first timeout (configured, else a quarter of the QP's timeout) drawn per QP from
// [first, 2 x first) (a hash of the QP number, so that a run is repeatable), doubled by each
// timeout, never above the QP's retransmit_timeout.
inline clock::Nanos timeout(const config::TransportConfig& config, uint32_t retries, uint32_t qpn) {
  const uint64_t cap = config.retransmit_timeout_ns;
  if (config.retransmission == config::Retransmission::kFixed)
    return static_cast<clock::Nanos>(cap);
  const uint64_t first = first_timeout(config);
  if (retries == 0) {
    uint64_t mix = (qpn + 1) * 0x9E3779B97F4A7C15ull;
    mix ^= mix >> 29;
    mix *= 0xBF58476D1CE4E5B9ull;
    mix ^= mix >> 32;
    return static_cast<clock::Nanos>(std::min(cap, first + mix % first));
  }
  // first << retries, without overflowing for long runs of timeouts.
  if (retries >= 64u - static_cast<uint32_t>(std::bit_width(first))) {
    return static_cast<clock::Nanos>(cap);
  }
  return static_cast<clock::Nanos>(std::min(cap, first << retries));
}

// Adaptive retransmission fails a connection that has had nothing acknowledged for
// retransmit_timeout x retry_count. The requester keeps when its current stall began as a 16-bit
// stamp of the clock in units of a power of two between 1/256 and 1/128 of that limit (two bytes
// fit in its QP's padding; a full time would cost 8 bytes a connection). So the limit is seen
// within 1 % of itself; the stamp cannot wrap unseen, since the limit is checked at every timeout
// and no timeout is longer than the limit (256 limits fit in 16 bits).
class StallClock {
 public:
  explicit StallClock(const config::TransportConfig& config)
      : limit_(config.retransmit_timeout_ns * config.retry_count),
        shift_(std::max(0, static_cast<int>(std::bit_width(limit_)) - 8)),
        limit_units_((limit_ + (uint64_t{1} << shift_) - 1) >> shift_) {}

  uint16_t stamp(clock::Nanos now) const {
    return static_cast<uint16_t>(static_cast<uint64_t>(now) >> shift_);
  }
  // Whether a stall that began at `since` (a stamp) has reached the limit at `now`.
  bool exhausted(uint16_t since, clock::Nanos now) const {
    const auto elapsed = static_cast<uint16_t>(stamp(now) - since);
    return elapsed >= limit_units_;
  }

 private:
  uint64_t limit_;
  int shift_;
  uint64_t limit_units_;
};

}  // namespace etwire::transport::retransmit_timing

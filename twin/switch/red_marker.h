// The congestion point of DCQCN (spec 3.8): RED-style ECN marking on the depth of a switch egress
// queue, decided when a packet leaves the queue (the backlog behind it) or when it joins (the
// backlog ahead of it), as configured. No marks below Kmin, a probability rising linearly from 0
// at Kmin to Pmax at Kmax, and every ECN-capable packet above Kmax.
#pragma once

#include <cstdint>

#include "config/fabric_config.h"
#include "twin/prng.h"

namespace etwire::twin {

class RedMarker {
 public:
  RedMarker() = default;  // marks nothing
  explicit RedMarker(const config::EcnMarking& config);

  // Whether the decision is taken as a packet leaves the egress queue rather than as it joins.
  bool marks_on_dequeue() const { return on_dequeue_; }

  // The marking probability for a packet that finds `depth_bytes` waiting ahead of it.
  double probability(uint64_t depth_bytes) const;

  // Whether to mark a packet that sees `depth_bytes` waiting (ahead of it on enqueue, behind it on
  // dequeue). Draws from `rng` only in the
  // linear region, so a queue that stays below Kmin or above Kmax consumes no random numbers.
  bool should_mark(uint64_t depth_bytes, SplitMix64& rng) const {
    if (!enabled_ || depth_bytes < kmin_bytes_) return false;
    if (depth_bytes > kmax_bytes_) return true;
    const double p = probability(depth_bytes);
    return p > 0 && rng.chance(p);
  }

 private:
  bool enabled_ = false;
  uint64_t kmin_bytes_ = 0;
  uint64_t kmax_bytes_ = 0;
  double pmax_ = 0;
  bool on_dequeue_ = false;
};

}  // namespace etwire::twin

// The congestion point of DCQCN (spec 3.8): RED-style ECN marking on the depth of a switch egress
// queue, decided when a packet leaves the queue (the backlog behind it) or when it joins (the
// backlog ahead of it), as configured. No marks below Kmin, a probability rising linearly from 0
// at Kmin to Pmax at Kmax, and every ECN-capable packet above Kmax.
//
// With a queue weight w below 1 (ecn.average_weight) the depth judged is RED's average instead
// (Floyd and Jacobson): each joining packet moves it by w towards the depth it finds; after the
// queue was empty, it first decays as if packets of the joining one's size had passed at the
// link's rate, each a factor of (1 - w). A burst then marks only once it has lasted, and a
// standing queue keeps marking while it drains, as a lab's RED queue does.
#pragma once

#include <cstdint>

#include "clock/time.h"
#include "config/fabric_config.h"
#include "twin/prng.h"

namespace etwire::twin {

class RedMarker {
 public:
  // A queue's state for a marker that averages or spreads its marks.
  struct Average {
    double bytes = 0;
    clock::Nanos idle_since = clock::kNever;  // when the queue last emptied; kNever: not empty
    uint64_t since_mark = 0;                  // packets judged in the ramp since the last mark
  };

  RedMarker() = default;  // marks nothing
  // `link_bps`: the speed of the port's link, which the average's decay over idle time goes by.
  explicit RedMarker(const config::EcnMarking& config, uint64_t link_bps = 0);

  bool averages() const { return weight_ < 1; }
  // The depth to judge a packet of `packet_bytes` joining at `now` by, which finds `depth_bytes`
  // ahead of it: the depth itself, or when averaging, `average` moved by it.
  uint64_t judged_depth(Average& average, uint64_t depth_bytes, uint32_t packet_bytes,
                        clock::Nanos now) const;

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

  // should_mark for a queue whose state is `state`: with ecn.spread_marks, RED's spacing (Floyd
  // and Jacobson): a packet that follows n unmarked ones in the ramp is marked with probability
  // p / (1 - n p), so that at a steady depth the gaps between marks are spread evenly from 1 to
  // 1/p packets instead of geometrically (mean (1 + 1/p) / 2 rather than 1/p).
  bool decide(Average& state, uint64_t depth_bytes, SplitMix64& rng) const {
    if (!spread_) return should_mark(depth_bytes, rng);
    return spread_decision(state, depth_bytes, rng);
  }

 private:
  bool enabled_ = false;
  uint64_t kmin_bytes_ = 0;
  uint64_t kmax_bytes_ = 0;
  double pmax_ = 0;
  bool on_dequeue_ = false;
  bool spread_decision(Average& state, uint64_t depth_bytes, SplitMix64& rng) const;

  double weight_ = 1;
  bool spread_ = false;
  double bytes_per_ns_ = 0;  // the link's rate
};

}  // namespace etwire::twin

// The congestion point of DCQCN (spec 3.8): RED-style ECN marking on the depth of a switch egress
// queue, decided when a packet leaves the queue (the backlog behind it) or when it joins (the
// backlog ahead of it), as configured. No marks below Kmin, a probability rising linearly from 0
// at Kmin to Pmax at Kmax, and every ECN-capable packet above Kmax (with ecn.gentle, the
// probability rises on from Pmax to 1 at 2 x Kmax, and every packet is marked only beyond that).
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
  // dequeue). Draws from `rng` only where the probability is neither 0 nor 1, so a queue that
  // stays below Kmin or above the forced depth consumes no random numbers.
  bool should_mark(uint64_t depth_bytes, SplitMix64& rng) const {
    if (!enabled_ || depth_bytes < kmin_bytes_) return false;
    if (depth_bytes > forced_bytes_) return true;
    const double p = probability(depth_bytes);
    return p > 0 && rng.chance(p);
  }

  // should_mark for a queue whose state is `state`, its marks spaced as ecn.spacing says. With n
  // unmarked packets since the last mark and the ramp's probability p:
  //   uniform (Floyd and Jacobson): marked with p / (1 - n p), so at a steady depth the gaps
  //     between marks spread evenly over 1 .. 1/p packets (mean (1 + 1/p) / 2 rather than 1/p);
  //   wait (ns-2's and ns-3's default): with c = (n + 1) p, never while c < 1, then p / (2 - c),
  //     surely from c = 2: gaps over 1/p .. 2/p packets (mean about 1.5 / p).
  // Below Kmin the count starts over. Above the forced depth every packet is marked; uniform
  // then starts its count over, wait counts on, as ns-3's RED counts every packet that joins.
  bool decide(Average& state, uint64_t depth_bytes, SplitMix64& rng) const {
    if (spacing_ == config::EcnSpacing::kIndependent) return should_mark(depth_bytes, rng);
    return spaced_decision(state, depth_bytes, rng);
  }

 private:
  bool enabled_ = false;
  uint64_t kmin_bytes_ = 0;
  uint64_t kmax_bytes_ = 0;
  uint64_t forced_bytes_ = 0;  // beyond it every packet is marked: Kmax, gentle 2 x Kmax
  double pmax_ = 0;
  bool on_dequeue_ = false;
  bool spaced_decision(Average& state, uint64_t depth_bytes, SplitMix64& rng) const;

  double weight_ = 1;
  config::EcnSpacing spacing_ = config::EcnSpacing::kIndependent;
  double bytes_per_ns_ = 0;  // the link's rate
};

}  // namespace etwire::twin

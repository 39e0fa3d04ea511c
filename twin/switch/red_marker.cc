#include "twin/switch/red_marker.h"

#include <cmath>

namespace etwire::twin {

RedMarker::RedMarker(const config::EcnMarking& config, uint64_t link_bps)
    : enabled_(config.enabled),
      kmin_bytes_(config.kmin_bytes),
      kmax_bytes_(config.kmax_bytes),
      forced_bytes_(config.gentle ? 2 * config.kmax_bytes : config.kmax_bytes),
      pmax_(config.pmax),
      on_dequeue_(config.mark_at == config::EcnMarkPoint::kDequeue),
      weight_(config.average_weight),
      spacing_(config.spacing),
      bytes_per_ns_(static_cast<double>(link_bps) / 8e9) {}

uint64_t RedMarker::judged_depth(Average& average, uint64_t depth_bytes, uint32_t packet_bytes,
                                 clock::Nanos now) const {
  if (!averages()) return depth_bytes;
  if (average.idle_since != clock::kNever && now > average.idle_since && packet_bytes > 0) {
    // The packets that could have passed while the queue was empty, each lowering the average.
    const double passed =
        static_cast<double>(now - average.idle_since) * bytes_per_ns_ / packet_bytes;
    average.bytes *= std::pow(1 - weight_, passed);
  }
  average.idle_since = clock::kNever;
  average.bytes += weight_ * (static_cast<double>(depth_bytes) - average.bytes);
  return static_cast<uint64_t>(average.bytes);
}

double RedMarker::probability(uint64_t depth_bytes) const {
  if (!enabled_ || depth_bytes < kmin_bytes_) return 0;
  if (depth_bytes > forced_bytes_) return 1;
  if (depth_bytes > kmax_bytes_) {
    // The gentle region: from Pmax at Kmax on to 1 at 2 x Kmax.
    return pmax_ + (1 - pmax_) * static_cast<double>(depth_bytes - kmax_bytes_) /
                       static_cast<double>(kmax_bytes_);
  }
  // Kmin == Kmax leaves no ramp: the single depth between "never" and "always" gets Pmax.
  if (kmax_bytes_ == kmin_bytes_) return pmax_;
  return pmax_ * static_cast<double>(depth_bytes - kmin_bytes_) /
         static_cast<double>(kmax_bytes_ - kmin_bytes_);
}

bool RedMarker::spaced_decision(Average& state, uint64_t depth_bytes, SplitMix64& rng) const {
  if (!enabled_ || depth_bytes < kmin_bytes_) {
    state.since_mark = 0;  // the ramp starts over
    return false;
  }
  const bool wait = spacing_ == config::EcnSpacing::kWait;
  if (depth_bytes > forced_bytes_) {
    state.since_mark = wait ? state.since_mark + 1 : 0;
    return true;
  }
  const double p = probability(depth_bytes);
  bool mark = false;
  if (wait) {
    // This packet counted: c = (n + 1) p.
    const double count = static_cast<double>(state.since_mark + 1) * p;
    mark = p > 0 && count >= 1 && (count >= 2 || rng.chance(p / (2 - count)));
  } else {
    // The (n+1)-th packet since the last mark goes with p / (1 - n p): each gap from 1 to 1/p
    // packets then has probability p.
    const double spread = static_cast<double>(state.since_mark) * p;
    mark = p > 0 && (spread >= 1 || rng.chance(p / (1 - spread)));
  }
  state.since_mark = mark ? 0 : state.since_mark + 1;
  return mark;
}

}  // namespace etwire::twin

#include "twin/switch/red_marker.h"

namespace etwire::twin {

RedMarker::RedMarker(const config::EcnMarking& config)
    : enabled_(config.enabled),
      kmin_bytes_(config.kmin_bytes),
      kmax_bytes_(config.kmax_bytes),
      pmax_(config.pmax),
      on_dequeue_(config.mark_at == config::EcnMarkPoint::kDequeue) {}

double RedMarker::probability(uint64_t depth_bytes) const {
  if (!enabled_ || depth_bytes < kmin_bytes_) return 0;
  if (depth_bytes > kmax_bytes_) return 1;
  // Kmin == Kmax leaves no ramp: the single depth between "never" and "always" gets Pmax.
  if (kmax_bytes_ == kmin_bytes_) return pmax_;
  return pmax_ * static_cast<double>(depth_bytes - kmin_bytes_) /
         static_cast<double>(kmax_bytes_ - kmin_bytes_);
}

}  // namespace etwire::twin

#include "cluster/clock_offset.h"

#include <stdexcept>

namespace etwire::cluster {

ClockOffset estimate_offset(std::span<const RoundTrip> samples) {
  ClockOffset best;
  bool found = false;
  for (const RoundTrip& s : samples) {
    const int64_t round_trip = s.received_ns - s.sent_ns;
    if (round_trip < 0) continue;
    ++best.samples;
    if (found && round_trip >= best.round_trip_ns) continue;
    found = true;
    best.round_trip_ns = round_trip;
    // The midpoint, without overflow for clocks far apart.
    best.offset_ns = s.remote_ns - (s.sent_ns + round_trip / 2);
    best.error_ns = (round_trip + 1) / 2;
  }
  if (!found) throw std::invalid_argument("clock offset: no usable round trip");
  return best;
}

}  // namespace etwire::cluster

// The device under test's queue toward one port, fitted from the frames that crossed it
// (queue_crossings.h), as the fabric twin's parameters: the rate it drains at, its least delay
// (the cables' propagation), the packets it holds before it drops, and its marking curve
// (twin/replay/marking_fit.h). What a frame found in the queue is its delay beyond the least one,
// in frames of the queue's rate.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "clock/time.h"
#include "runner/queue_crossings.h"
#include "twin/replay/marking_fit.h"

namespace etwire::runner {

struct DeviceFitInput {
  std::span<const CrossingsTo> runs;
  uint64_t configured_rate_bps = 0;       // the port's speed in the configuration
  std::vector<uint64_t> port_speeds_bps;  // every port's, for the senders' serialization
  clock::Nanos switch_latency_ns = 0;
  bool single_switch = false;  // whether the least delay can be read as propagation
};

struct DeviceFit {
  uint32_t frame_bytes = 0;  // the median data frame on the wire
  uint64_t rate_bps = 0;
  bool rate_measured = false;    // false: the queue never stayed busy; the configured rate
  uint64_t busy_pairs = 0;       // arrivals back to back behind a queue, the rate was read from
  clock::Nanos least_delay = 0;  // the 0.1th percentile of the frames' delays
  std::optional<clock::Nanos> propagation_ns;  // single switch only
  uint32_t most_frames_ahead = 0;              // the 99.9th percentile of what frames found
  std::optional<twin::MarkingFit> marking;     // when any frame came out marked
  std::optional<uint32_t> queue_packets;       // when frames were lost
  uint64_t sent = 0;
  uint64_t lost = 0;
  uint64_t unmatched = 0;  // arrivals no sender's capture holds a copy of (CrossingsTo::unmatched)
};

// Throws std::invalid_argument when no frame crossed.
DeviceFit fit_device(const DeviceFitInput& input);

// The averaging weights the marking fit tries, falling from 1 (the queue itself).
std::span<const double> averaging_weights();

// A device profile's overrides (KEY=VALUE) for the fit at configured port `port`, by what they
// set; a group is empty where the fit found nothing to set (the rate as configured, no loss, no
// marks, not a single switch).
struct ProfileGroups {
  std::vector<std::string> rate;
  std::vector<std::string> latency;
  std::vector<std::string> buffer;
  std::vector<std::string> marking;
};
ProfileGroups profile_groups(const DeviceFit& fit, size_t port, uint64_t configured_rate_bps);
std::vector<std::string> marking_overrides(const twin::MarkingFit& marking, uint32_t frame_bytes);

}  // namespace etwire::runner

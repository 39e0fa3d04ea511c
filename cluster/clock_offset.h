// How far one process's clock is from another's, from round trips between them: each sample is
// when a probe left (local clock), when the other side read its clock, and when the answer came
// back (local clock). The sample with the shortest round trip bounds the error best: the remote
// reading happened somewhere within that round trip, so taking its middle is off by at most half
// of it (the NTP and PTP reasoning, without their filters).
#pragma once

#include <cstdint>
#include <span>

namespace etwire::cluster {

struct RoundTrip {
  int64_t sent_ns = 0;      // local clock, probe out
  int64_t remote_ns = 0;    // the other process's clock, when it answered
  int64_t received_ns = 0;  // local clock, answer in
};

struct ClockOffset {
  // remote clock - local clock: add to a local reading to put it on the remote time base.
  int64_t offset_ns = 0;
  int64_t error_ns = 0;  // at most this far off: half the shortest round trip
  int64_t round_trip_ns = 0;
  uint32_t samples = 0;
};

// The estimate from `samples` (at least one; a sample whose answer came before its probe is
// ignored). Throws std::invalid_argument when no sample is usable.
ClockOffset estimate_offset(std::span<const RoundTrip> samples);

}  // namespace etwire::cluster

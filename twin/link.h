// One direction of a cable: a wire that serializes frames at its rate (an exact LineRateTimer),
// then carries them for the propagation delay. Frames on a link arrive in the order they were
// sent, so the packets in flight are a FIFO, and only its oldest packet needs an arrival event in
// the scheduler: when it fires, it schedules the next one. The scheduler's heap thus holds one
// event per busy link rather than one per packet in flight, which keeps it small on long or
// fast links (10 us at 400 Gb/s is 120 packets of 4 KB in flight).
#pragma once

#include <algorithm>
#include <cstdint>

#include "clock/line_rate.h"
#include "clock/time.h"
#include "common/ring_queue.h"
#include "twin/frame_tap.h"
#include "twin/prng.h"

namespace etwire::twin {

// One end of a cable: a host's NIC port or a switch port (global index).
struct Endpoint {
  enum class Kind : uint8_t { kHost, kSwitchPort };
  Kind kind = Kind::kHost;
  uint32_t index = 0;

  bool is_host() const { return kind == Kind::kHost; }
  bool operator==(const Endpoint&) const = default;
};

struct InFlightPacket {
  uint32_t slot = 0;            // in the packet pool
  clock::Nanos arrives_at = 0;  // when the far end handles it
};

inline constexpr uint16_t kNoCrossing = 0xFFFF;

struct Link {
  clock::LineRateTimer wire;
  // From the last byte leaving the sender to the moment the far end handles the frame: the
  // propagation delay plus, when the far end is a switch, its forwarding latency (folded in here
  // so that a packet costs one event per hop instead of two).
  clock::Nanos frame_delay_ns = 0;
  // Pause frames are consumed by the receiving MAC and skip the forwarding latency.
  clock::Nanos propagation_ns = 0;
  RingQueue<InFlightPacket> in_flight;  // oldest first
  double drop_probability = 0;
  double corrupt_probability = 0;  // the frame arrives with a bad ICRC
  double reorder_probability = 0;  // a frame leaving a switch port overtakes the one ahead of it
  SplitMix64 fault_rng;
  // A host's link only (fabric.sender_jitter): each frame arrives up to this much later, drawn
  // from jitter_rng, never before the frame sent ahead of it.
  clock::Nanos jitter_ns = 0;
  clock::Nanos last_jittered_arrival = 0;
  SplitMix64 jitter_rng;
  bool up = true;
  // The partition the far end is in, when the twin is cut and it is not this one
  // (twin_partition.h): frames then leave as crossings.
  uint16_t crosses_to = kNoCrossing;
  Endpoint from;
  Endpoint to;
  // Where the twin that carries the link keeps `to` (among its hosts or its switch ports), when
  // it holds it: a partition holds only its own hosts and switch ports.
  uint32_t to_slot = 0;
  FrameTap* sender_tap = nullptr;    // sees what `from` sends on the link
  FrameTap* receiver_tap = nullptr;  // sees what `to` receives from it

  // Starts a frame of `bytes` at `now` (or when the wire frees, if later) and returns when its
  // last byte is out. A frame started at the very nanosecond the wire frees continues from the
  // previous frame's exact (sub-nanosecond) end instead of the rounded-up one, so back-to-back
  // frames run at exactly the line rate however many there are.
  clock::Nanos serialize(clock::Nanos now, uint32_t bytes) {
    const clock::Nanos earliest = now == wire.free_at() ? now - 1 : now;
    return wire.transmit(earliest, bytes);
  }

  // Whether the frame about to be sent is lost to the link's fault probability; draws a random
  // number only when that probability is set.
  bool loses_frame() { return drop_probability > 0 && fault_rng.chance(drop_probability); }
  bool corrupts_frame() { return corrupt_probability > 0 && fault_rng.chance(corrupt_probability); }
  bool reorders_frame() { return reorder_probability > 0 && fault_rng.chance(reorder_probability); }

  // When a frame whose last byte is out at `last_byte_out` arrives at the far end: after the
  // link's delay and, on a host's link with sender jitter, a drawn lateness, in order.
  clock::Nanos arrival(clock::Nanos last_byte_out) {
    const clock::Nanos arrives_at = last_byte_out + frame_delay_ns;
    if (jitter_ns == 0) return arrives_at;
    const auto late =
        static_cast<clock::Nanos>(jitter_rng.next() % (static_cast<uint64_t>(jitter_ns) + 1));
    last_jittered_arrival = std::max(last_jittered_arrival, arrives_at + late);
    return last_jittered_arrival;
  }
};

}  // namespace etwire::twin

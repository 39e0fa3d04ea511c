// When a port should pause its link partner, as a NIC's PFC does for a lossless class: the
// receive backlog (descriptors waiting in the RX queue) reaching XOFF pauses the class, a pause
// is sent again before the previous one runs out while the backlog stays above XON, and the
// backlog falling to XON or below resumes the class at once instead of letting the pause run out.
// Pure decision logic on occupancy samples and times, so that it can be tested without a device.
#pragma once

#include <cstdint>

#include "clock/time.h"

namespace etwire::nic::dpdk {

struct PauseThresholds {
  uint32_t xoff = 0;  // pause at this occupancy or above; at least 1
  uint32_t xon = 0;   // resume at this occupancy or below; below xoff
  // How long one pause lasts at the link partner (its quanta at the port's speed). A pause is
  // refreshed after half of it, leaving the other half for a late poll and the frame's flight.
  clock::Nanos pause_duration = 0;
};

enum class PauseAction : uint8_t {
  kNone,
  kPause,   // send a pause with the configured quanta
  kResume,  // send a pause with quanta 0
};

class PauseGenerator {
 public:
  // Throws std::invalid_argument unless 0 <= xon < xoff and pause_duration > 0.
  explicit PauseGenerator(const PauseThresholds& thresholds);

  // Takes the RX queue's occupancy at `now` and says what to send, and counts it as sent.
  PauseAction sample(uint32_t occupancy, clock::Nanos now);
  // The frame `sample` asked for could not be queued: the next sample asks again.
  void not_sent(PauseAction action);

  // The link partner is (or is about to be) paused: occupancy must be sampled on every poll to
  // catch XON and the refresh time.
  bool paused() const { return paused_; }
  const PauseThresholds& thresholds() const { return thresholds_; }
  clock::Nanos refresh_interval() const { return refresh_interval_; }

 private:
  PauseThresholds thresholds_;
  clock::Nanos refresh_interval_ = 0;
  bool paused_ = false;
  clock::Nanos last_pause_at_ = 0;
  bool pause_owed_ = false;  // a pause could not be queued: send one at the next sample
};

}  // namespace etwire::nic::dpdk

#include "nic/dpdk/pause_generator.h"

#include <stdexcept>

namespace etwire::nic::dpdk {

PauseGenerator::PauseGenerator(const PauseThresholds& thresholds)
    : thresholds_(thresholds), refresh_interval_(thresholds.pause_duration / 2) {
  if (thresholds.xon >= thresholds.xoff) {
    throw std::invalid_argument("PFC generation: xon must be below xoff");
  }
  if (thresholds.pause_duration <= 0) {
    throw std::invalid_argument("PFC generation: a pause must last some time");
  }
}

PauseAction PauseGenerator::sample(uint32_t occupancy, clock::Nanos now) {
  if (!paused_) {
    if (occupancy < thresholds_.xoff) return PauseAction::kNone;
    paused_ = true;
    pause_owed_ = false;
    last_pause_at_ = now;
    return PauseAction::kPause;
  }
  if (occupancy <= thresholds_.xon) {
    // Resuming at once gives the partner its class back without waiting out the quanta; a
    // resume to a partner whose pause never went out is harmless.
    paused_ = false;
    pause_owed_ = false;
    return PauseAction::kResume;
  }
  if (pause_owed_ || now - last_pause_at_ >= refresh_interval_) {
    pause_owed_ = false;
    last_pause_at_ = now;
    return PauseAction::kPause;
  }
  return PauseAction::kNone;
}

void PauseGenerator::not_sent(PauseAction action) {
  if (action == PauseAction::kPause) {
    pause_owed_ = true;
  } else if (action == PauseAction::kResume) {
    // Still paused as far as the partner knows: the next sample at or below XON resumes again.
    paused_ = true;
  }
}

}  // namespace etwire::nic::dpdk

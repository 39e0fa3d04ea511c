// Real time for hardware backends, read from the CPU's time-stamp counter (a few nanoseconds per
// read, against tens for a system call) and converted with a rate calibrated at construction
// against the monotonic system clock. Busy-polled from the worker's run-to-completion loop.
#pragma once

#include <cstdint>

#include "clock/event_queue.h"
#include "clock/scheduler.h"

namespace etwire::clock {

class WallClock final : public Scheduler {
 public:
  // Calibrates the counter over `calibration` of real time (a short sleep).
  explicit WallClock(Nanos calibration = 10 * kNanosPerMilli);

  // Nanoseconds since construction or the last restart().
  Nanos now() const override;
  // Counts time from now on. Only while no event is pending (their times would shift); throws
  // std::logic_error otherwise.
  void restart();
  // Reads the same time as `reference` from now on (its origin and calibration), so that times
  // taken on different cores compare. Only while no event is pending, as restart().
  void share_time_with(const WallClock& reference);
  void run_at(Nanos when, EventHandler* handler, uint64_t tag) override;
  // Runs the events whose time has come, at most kPollBudget of them, so that a loop that
  // cannot keep up (events due again at once, as when a paced sender catches up) still gets back
  // to its devices; returns at once when none is due.
  uint64_t poll() override;
  static constexpr uint64_t kPollBudget = 64;
  // The time the last poll() read, after the last event it ran: a loop that polls the clock and
  // then its devices takes this instead of reading the counter once more.
  Nanos last_read() const { return last_read_; }
  bool idle() const override { return queue_.empty(); }

  // Counter ticks per nanosecond, as calibrated; 0 when the counter is not used (then the system
  // monotonic clock is read instead).
  double ticks_per_nano() const { return ticks_per_nano_; }

 private:
  EventQueue queue_;
  uint64_t origin_ticks_ = 0;
  int64_t origin_system_ns_ = 0;
  double ticks_per_nano_ = 0;
  double nanos_per_tick_ = 0;
  Nanos last_read_ = 0;
};

}  // namespace etwire::clock

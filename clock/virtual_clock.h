// Discrete-event time for the loopback NIC and the fabric twin: time jumps from one event to the
// next, so a run takes as long as its events take to process, and the same inputs give the same
// order of events every time.
#pragma once

#include "clock/event_queue.h"
#include "clock/scheduler.h"

namespace etwire::clock {

class VirtualClock final : public Scheduler {
 public:
  explicit VirtualClock(Nanos start = 0) : now_(start) {}

  Nanos now() const override { return now_; }
  void run_at(Nanos when, EventHandler* handler, uint64_t tag) override;
  // Advances to the earliest pending time and runs every event due then (including ones those
  // events schedule for the same time).
  uint64_t poll() override;
  bool idle() const override { return queue_.empty(); }

  // Runs events until none is left or the next one is later than `limit`; time ends at the last
  // event run (or stays, if none ran). Returns the number of events run.
  uint64_t run_until(Nanos limit);
  Nanos next_event_time() const { return queue_.next_time(); }
  uint64_t events_run() const { return events_run_; }
  size_t pending() const { return queue_.size(); }

 private:
  EventQueue queue_;
  Nanos now_;
  uint64_t events_run_ = 0;
};

}  // namespace etwire::clock

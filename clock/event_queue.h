// The pending events of a scheduler, earliest first, ties in scheduling order.
//
// Two stores, one order. Events due within the timing wheel's span of the last event run (frame
// arrivals, wire-free wake-ups, pacer turns: nearly all of them) go to the wheel, which files
// them by nanosecond. The rest go to a heap: retransmission timers tens of milliseconds out (one
// per QP, thousands, rarely due, so they stay out of the way) and, on the wall clock, events
// asked for in the past. Both stores are ordered by (time, scheduling order), and pop takes the
// earlier of their two fronts by that key, so the order of events is exactly that of a single
// priority queue. Neither allocates once it has grown to the largest backlog seen.
#pragma once

#include <cstddef>
#include <cstdint>

#include "clock/event_heap.h"
#include "clock/scheduled_event.h"
#include "clock/timing_wheel.h"

namespace etwire::clock {

class EventQueue {
 public:
  void push(Nanos when, EventHandler* handler, uint64_t tag);
  // The earliest event; the queue must not be empty.
  ScheduledEvent pop();
  bool empty() const { return wheel_.empty() && heap_.empty(); }
  size_t size() const { return wheel_.size() + heap_.size(); }
  // Tells the handler of the next event in the wheel (nearly every event) that it comes next.
  void prefetch_next() const {
    if (!wheel_.empty()) wheel_.next_handler()->prefetch(wheel_.next_tag());
  }
  // Time of the earliest event, kNever when empty.
  Nanos next_time() const {
    const Nanos wheel = wheel_.next_time();
    const Nanos heap = heap_.next_time();
    return wheel < heap ? wheel : heap;
  }

 private:
  TimingWheel wheel_;
  EventHeap heap_;
  uint64_t next_sequence_ = 0;
};

}  // namespace etwire::clock

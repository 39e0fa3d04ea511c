#include "clock/event_queue.h"

namespace etwire::clock {

void EventQueue::push(Nanos when, EventHandler* handler, uint64_t tag) {
  const uint64_t sequence = next_sequence_++;
  if (wheel_.fits(when)) {
    wheel_.push(when, sequence, handler, tag);
  } else {
    heap_.push(ScheduledEvent{when, sequence, handler, tag});
  }
}

ScheduledEvent EventQueue::pop() {
  if (!wheel_.empty()) {
    const Nanos wheel_time = wheel_.next_time();
    const Nanos heap_time = heap_.next_time();
    // Scheduling order decides only a tie in time, which is rare; reading the wheel's sequence
    // costs loads the common case skips. (A timer filed in the heap while its time was beyond
    // the wheel's span ties with events filed in the wheel later, and goes first.)
    if (heap_.empty() || wheel_time < heap_time ||
        (wheel_time == heap_time && wheel_.next_sequence() < heap_.next_sequence())) {
      return wheel_.pop();
    }
  }
  const ScheduledEvent event = heap_.pop();
  // It was the earliest of all, so the wheel's window may start there. The wall clock runs
  // events asked for in the past, which must not move the floor back.
  if (event.when > wheel_.floor()) wheel_.advance_to(event.when);
  return event;
}

}  // namespace etwire::clock

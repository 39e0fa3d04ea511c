#include "clock/virtual_clock.h"

#include <algorithm>

namespace etwire::clock {

void VirtualClock::run_at(Nanos when, EventHandler* handler, uint64_t tag) {
  // Time never runs backwards: an event asked for in the past runs at the current time.
  queue_.push(std::max(when, now_), handler, tag);
}

uint64_t VirtualClock::poll() {
  if (queue_.empty()) return 0;
  const Nanos due = queue_.next_time();
  now_ = due;
  uint64_t ran = 0;
  while (!queue_.empty() && queue_.next_time() == due) {
    ScheduledEvent event = queue_.pop();
    queue_.prefetch_next();
    event.handler->on_event(event.tag, now_);
    ++ran;
  }
  events_run_ += ran;
  return ran;
}

uint64_t VirtualClock::run_until(Nanos limit) {
  uint64_t ran = 0;
  while (!queue_.empty() && queue_.next_time() <= limit) ran += poll();
  return ran;
}

}  // namespace etwire::clock

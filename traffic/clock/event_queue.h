// The pending events of a scheduler, earliest first, ties in scheduling order. A binary heap over
// one vector of small entries: it grows to the largest backlog seen and then never allocates.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "traffic/clock/scheduler.h"

namespace etwire::clock {

struct ScheduledEvent {
  Nanos when = 0;
  uint64_t sequence = 0;  // tie-breaker: deterministic order for events due at the same time
  EventHandler* handler = nullptr;
  uint64_t tag = 0;
};

class EventQueue {
 public:
  void push(Nanos when, EventHandler* handler, uint64_t tag);
  // Earliest event; the queue must not be empty.
  const ScheduledEvent& top() const { return heap_.front(); }
  ScheduledEvent pop();
  bool empty() const { return heap_.empty(); }
  size_t size() const { return heap_.size(); }
  Nanos next_time() const { return heap_.empty() ? kNever : heap_.front().when; }
  void reserve(size_t events) { heap_.reserve(events); }

 private:
  static bool earlier(const ScheduledEvent& a, const ScheduledEvent& b) {
    return a.when < b.when || (a.when == b.when && a.sequence < b.sequence);
  }
  std::vector<ScheduledEvent> heap_;
  uint64_t next_sequence_ = 0;
};

}  // namespace etwire::clock

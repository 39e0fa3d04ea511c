// The pending events of a scheduler, earliest first, ties in scheduling order.
//
// Two 4-ary heaps over vectors of small entries that grow to the largest backlog seen and then
// never allocate. Events due within a short horizon of the last one popped (packet arrivals,
// wire-free wake-ups) go to the near heap; later ones (retransmission timers, tens of
// milliseconds out, one per QP) to the far heap. The far heap holds thousands of events that are
// rarely due, so keeping them out of the near heap keeps it small and in cache while it is
// popped once per packet hop. The order of events is exactly the single-heap order: pop takes
// the earlier of the two tops by (time, sequence).
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
  // Events further out than this from the last popped time go to the far heap.
  static constexpr Nanos kNearHorizon = 100 * kNanosPerMicro;

  void push(Nanos when, EventHandler* handler, uint64_t tag);
  // Earliest event; the queue must not be empty.
  const ScheduledEvent& top() const { return near_first() ? near_.front() : far_.front(); }
  ScheduledEvent pop();
  bool empty() const { return near_.empty() && far_.empty(); }
  size_t size() const { return near_.size() + far_.size(); }
  Nanos next_time() const { return empty() ? kNever : top().when; }
  void reserve(size_t events) { near_.reserve(events); }

 private:
  using Heap = std::vector<ScheduledEvent>;

  static bool earlier(const ScheduledEvent& a, const ScheduledEvent& b) {
    return a.when < b.when || (a.when == b.when && a.sequence < b.sequence);
  }
  static void push_heap(Heap& heap, const ScheduledEvent& event);
  static ScheduledEvent pop_heap(Heap& heap);
  bool near_first() const {
    return far_.empty() || (!near_.empty() && earlier(near_.front(), far_.front()));
  }

  Heap near_;
  Heap far_;
  Nanos last_popped_ = 0;
  uint64_t next_sequence_ = 0;
};

}  // namespace etwire::clock

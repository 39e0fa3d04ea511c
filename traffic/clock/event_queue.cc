#include "traffic/clock/event_queue.h"

#include <utility>

namespace etwire::clock {

void EventQueue::push(Nanos when, EventHandler* handler, uint64_t tag) {
  heap_.push_back({when, next_sequence_++, handler, tag});
  // Sift up.
  size_t i = heap_.size() - 1;
  while (i > 0) {
    size_t parent = (i - 1) / 2;
    if (!earlier(heap_[i], heap_[parent])) break;
    std::swap(heap_[i], heap_[parent]);
    i = parent;
  }
}

ScheduledEvent EventQueue::pop() {
  ScheduledEvent first = heap_.front();
  heap_.front() = heap_.back();
  heap_.pop_back();
  // Sift down.
  size_t i = 0;
  const size_t n = heap_.size();
  for (;;) {
    size_t left = 2 * i + 1;
    if (left >= n) break;
    size_t child = left + 1 < n && earlier(heap_[left + 1], heap_[left]) ? left + 1 : left;
    if (!earlier(heap_[child], heap_[i])) break;
    std::swap(heap_[i], heap_[child]);
    i = child;
  }
  return first;
}

}  // namespace etwire::clock

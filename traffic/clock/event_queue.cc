#include "traffic/clock/event_queue.h"

namespace etwire::clock {

// 4-ary heaps: half the levels of a binary heap, and a node's children share a cache line or
// two. Sifting moves a hole instead of swapping, so each level costs one copy.
namespace {
constexpr size_t kArity = 4;
}

void EventQueue::push_heap(Heap& heap, const ScheduledEvent& event) {
  heap.emplace_back();
  size_t hole = heap.size() - 1;
  while (hole > 0) {
    const size_t parent = (hole - 1) / kArity;
    if (!earlier(event, heap[parent])) break;
    heap[hole] = heap[parent];
    hole = parent;
  }
  heap[hole] = event;
}

ScheduledEvent EventQueue::pop_heap(Heap& heap) {
  const ScheduledEvent first = heap.front();
  const ScheduledEvent last = heap.back();
  heap.pop_back();
  const size_t n = heap.size();
  if (n == 0) return first;
  size_t hole = 0;
  for (;;) {
    const size_t child_begin = kArity * hole + 1;
    if (child_begin >= n) break;
    const size_t child_end = child_begin + kArity < n ? child_begin + kArity : n;
    size_t best = child_begin;
    for (size_t child = child_begin + 1; child < child_end; ++child) {
      if (earlier(heap[child], heap[best])) best = child;
    }
    if (!earlier(heap[best], last)) break;
    heap[hole] = heap[best];
    hole = best;
  }
  heap[hole] = last;
  return first;
}

void EventQueue::push(Nanos when, EventHandler* handler, uint64_t tag) {
  const ScheduledEvent event{when, next_sequence_++, handler, tag};
  push_heap(when - last_popped_ > kNearHorizon ? far_ : near_, event);
}

ScheduledEvent EventQueue::pop() {
  const ScheduledEvent event = near_first() ? pop_heap(near_) : pop_heap(far_);
  last_popped_ = event.when;
  return event;
}

}  // namespace etwire::clock

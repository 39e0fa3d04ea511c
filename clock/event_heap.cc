#include "clock/event_heap.h"

namespace etwire::clock {

namespace {
// Half the levels of a binary heap; a node's four children (128 bytes) span two or three cache
// lines.
constexpr size_t kArity = 4;
}  // namespace

EventHeap::EventHeap() : slots_(kArity, Entry{kSentinel, nullptr, 0}) {}

void EventHeap::push(const ScheduledEvent& event) {
  const Entry entry{key_of(event.when, event.sequence), event.handler, event.tag};
  size_t hole = size_++;
  // Keep kArity sentinels past the last entry, so the children of any inner node are all there.
  if (slots_.size() < size_ + kArity) slots_.push_back(Entry{kSentinel, nullptr, 0});
  Entry* const slots = slots_.data();
  while (hole > 0) {
    const size_t parent = (hole - 1) / kArity;
    if (!(entry.key < slots[parent].key)) break;
    slots[hole] = slots[parent];
    hole = parent;
  }
  slots[hole] = entry;
}

ScheduledEvent EventHeap::pop() {
  Entry* const slots = slots_.data();
  const Entry first = slots[0];
  const size_t last_index = --size_;
  const Entry last = slots[last_index];
  slots[last_index].key = kSentinel;
  if (last_index == 0) return to_event(first);
  size_t hole = 0;
  for (;;) {
    const size_t child = kArity * hole + 1;
    if (child >= last_index) break;
    // The smallest of four as a two-round tournament. Written as selects and a multiply so the
    // compiler emits conditional moves: a branch here would be mispredicted half the time.
    const Key k0 = slots[child].key;
    const Key k1 = slots[child + 1].key;
    const Key k2 = slots[child + 2].key;
    const Key k3 = slots[child + 3].key;
    const bool second_smaller = k1 < k0;
    const bool fourth_smaller = k3 < k2;
    const Key low_pair = second_smaller ? k1 : k0;
    const Key high_pair = fourth_smaller ? k3 : k2;
    const size_t low = child + static_cast<size_t>(second_smaller);
    const size_t high = child + 2 + static_cast<size_t>(fourth_smaller);
    const size_t smallest = low + (high - low) * static_cast<size_t>(high_pair < low_pair);
    slots[hole] = slots[smallest];
    hole = smallest;
  }
  while (hole > 0) {
    const size_t parent = (hole - 1) / kArity;
    if (!(last.key < slots[parent].key)) break;
    slots[hole] = slots[parent];
    hole = parent;
  }
  slots[hole] = last;
  return to_event(first);
}

}  // namespace etwire::clock

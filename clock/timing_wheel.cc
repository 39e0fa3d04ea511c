#include "clock/timing_wheel.h"

namespace etwire::clock {

TimingWheel::TimingWheel() : tails_(kSlots, kNone) {}

uint32_t TimingWheel::allocate_node() {
  if (free_ != kNone) {
    const uint32_t node = free_;
    free_ = nodes_[node].next;
    return node;
  }
  nodes_.emplace_back();
  return static_cast<uint32_t>(nodes_.size() - 1);
}

void TimingWheel::push(Nanos when, uint64_t sequence, EventHandler* handler, uint64_t tag) {
  const size_t slot = slot_of(when);
  const uint32_t node = allocate_node();
  Node& added = nodes_[node];
  added.sequence = sequence;
  added.handler = handler;
  added.tag = tag;
  const uint32_t tail = tails_[slot];
  if (tail == kNone) {
    added.next = node;
    occupied_[slot / 64] |= uint64_t{1} << (slot % 64);
    occupied_words_ |= uint64_t{1} << (slot / 64);
  } else {
    added.next = nodes_[tail].next;
    nodes_[tail].next = node;
  }
  tails_[slot] = node;
  ++size_;
  if (when < front_when_) front_when_ = when;
}

ScheduledEvent TimingWheel::pop() {
  const Nanos when = front_when_;
  const size_t slot = slot_of(when);
  const uint32_t tail = tails_[slot];
  const uint32_t head = nodes_[tail].next;
  const Node& taken = nodes_[head];
  const ScheduledEvent event{when, taken.sequence, taken.handler, taken.tag};
  --size_;
  floor_ = when;
  if (head != tail) {
    nodes_[tail].next = taken.next;
  } else {
    tails_[slot] = kNone;
    uint64_t& word = occupied_[slot / 64];
    word &= ~(uint64_t{1} << (slot % 64));
    if (word == 0) occupied_words_ &= ~(uint64_t{1} << (slot / 64));
    if (size_ == 0) {
      front_when_ = kNever;
    } else {
      // Everything held is due in [when, when + kSpan), so the distance round the wheel from
      // this slot is the distance in time.
      const size_t next = first_occupied_from(slot);
      front_when_ = when + static_cast<Nanos>((next - slot) & (kSlots - 1));
    }
  }
  nodes_[head].next = free_;
  free_ = head;
  return event;
}

size_t TimingWheel::first_occupied_from(size_t slot) const {
  const size_t word = slot / 64;
  const uint64_t here = occupied_[word] & (~uint64_t{0} << (slot % 64));
  if (here != 0) return word * 64 + static_cast<size_t>(__builtin_ctzll(here));
  // The words after this one, else round from the first (which may be this word's lower bits).
  const uint64_t later = word + 1 < kWords ? occupied_words_ & (~uint64_t{0} << (word + 1)) : 0;
  const uint64_t words = later != 0 ? later : occupied_words_;
  const size_t found = static_cast<size_t>(__builtin_ctzll(words));
  return found * 64 + static_cast<size_t>(__builtin_ctzll(occupied_[found]));
}

}  // namespace etwire::clock

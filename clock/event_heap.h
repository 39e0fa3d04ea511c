// A min-heap of scheduled events by (time, sequence), for the events the timing wheel cannot
// hold: timers far ahead (retransmission deadlines, one per QP) and, on the wall clock, events
// asked for in the past.
//
// 4-ary, over a vector that grows to the largest backlog seen and then never allocates. Which
// child is smallest is a coin toss the branch predictor loses, so popping never branches on it:
// the hole walks from the root to a leaf along the smallest children, chosen among four with
// conditional moves and arithmetic, and only then is the old last entry sifted up from there
// (rarely more than a step: it came from the bottom). Slots past the last entry hold sentinels
// that sort after everything, so every inner node has four children to compare.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "clock/scheduled_event.h"

namespace etwire::clock {

class EventHeap {
 public:
  EventHeap();

  void push(const ScheduledEvent& event);
  // The earliest event; the heap must not be empty.
  ScheduledEvent pop();
  bool empty() const { return size_ == 0; }
  size_t size() const { return size_; }
  // Time of the earliest event, kNever when empty.
  Nanos next_time() const { return empty() ? kNever : time_of(slots_[0].key); }
  // Scheduling order of the earliest event; the heap must not be empty.
  uint64_t next_sequence() const { return static_cast<uint64_t>(slots_[0].key); }

 private:
  // (time, sequence) as one unsigned 128-bit number: ordering is a compare and a subtract with
  // borrow, no branch. The time's sign bit is flipped so that negative times order first.
  using Key = unsigned __int128;
  static constexpr uint64_t kSignBit = uint64_t{1} << 63;
  static constexpr Key kSentinel = ~Key{0};

  struct Entry {
    Key key;
    EventHandler* handler;
    uint64_t tag;
  };

  static Key key_of(Nanos when, uint64_t sequence) {
    return (Key{static_cast<uint64_t>(when) ^ kSignBit} << 64) | sequence;
  }
  static Nanos time_of(Key key) {
    return static_cast<Nanos>(static_cast<uint64_t>(key >> 64) ^ kSignBit);
  }
  static ScheduledEvent to_event(const Entry& entry) {
    return {time_of(entry.key), static_cast<uint64_t>(entry.key), entry.handler, entry.tag};
  }

  std::vector<Entry> slots_;  // size_ entries, then at least four sentinels
  size_t size_ = 0;
};

}  // namespace etwire::clock

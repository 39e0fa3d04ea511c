// The events due within the next few microseconds, one first-in-first-out list per nanosecond.
//
// Nearly every event of the data plane is due less than 2 us after the one being run (the next
// frame arrival on a link, a wire going free, a paced QP's next turn), and a heap pays a dozen
// hard-to-predict comparisons to order each of them. Here an event is appended to the slot of
// its nanosecond, and the earliest one is found with a couple of bit scans over a two-level
// bitmap of occupied slots. Events in one slot are due at the same time and are listed in the
// order they were scheduled, so taking slot by slot, head first, is exactly the order (time,
// scheduling order).
//
// The wheel covers kSpan nanoseconds from its floor: a time no later than any event it holds,
// moved forward by the owner as events are run. An event fits if it is due in [floor, floor +
// kSpan); the owner keeps the others elsewhere. Every event held lies in that window, so each
// slot holds a single time. Nodes come from a pool that grows to the largest backlog seen and is
// then reused: no allocation per event once warm.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "clock/scheduled_event.h"

namespace etwire::clock {

class TimingWheel {
 public:
  // 4.096 us for 16 KiB of slots. In a 100G leaf-spine run 99.9 % of events fall within it (the
  // furthest regular ones are frame arrivals after a cable and a switch, ~2 us). Slower links or
  // longer cables only send more events to the owner's other store.
  static constexpr int kSlotBits = 12;
  static constexpr Nanos kSpan = Nanos{1} << kSlotBits;

  TimingWheel();

  Nanos floor() const { return floor_; }
  // Moves the window forward; no event held may be earlier than `floor`.
  void advance_to(Nanos floor) { floor_ = floor; }
  bool fits(Nanos when) const {
    // In unsigned arithmetic a time before the floor is a huge distance, so it does not fit.
    return static_cast<uint64_t>(when) - static_cast<uint64_t>(floor_) <
           static_cast<uint64_t>(kSpan);
  }

  // `when` must fit, and `sequence` be larger than that of every event held.
  void push(Nanos when, uint64_t sequence, EventHandler* handler, uint64_t tag);
  bool empty() const { return size_ == 0; }
  size_t size() const { return size_; }
  // Time of the earliest event, kNever when empty.
  Nanos next_time() const { return front_when_; }
  // Scheduling order of the earliest event; the wheel must not be empty.
  uint64_t next_sequence() const { return nodes_[head_of(slot_of(front_when_))].sequence; }
  // Whom the earliest event calls, and its tag; the wheel must not be empty.
  EventHandler* next_handler() const { return nodes_[head_of(slot_of(front_when_))].handler; }
  uint64_t next_tag() const { return nodes_[head_of(slot_of(front_when_))].tag; }
  // The earliest event; the wheel must not be empty. The floor moves to its time.
  ScheduledEvent pop();

 private:
  static constexpr size_t kSlots = size_t{1} << kSlotBits;
  static constexpr size_t kWords = kSlots / 64;
  static_assert(kWords <= 64, "one summary word must cover the occupancy words");
  static constexpr uint32_t kNone = UINT32_MAX;

  struct Node {
    uint64_t sequence;
    EventHandler* handler;
    uint64_t tag;
    uint32_t next;  // in a slot: the next node, circularly; when free: the next free node
  };

  static size_t slot_of(Nanos when) { return static_cast<size_t>(when) & (kSlots - 1); }
  // A slot's list is circular and known by its tail, so one index per slot gives both ends.
  uint32_t head_of(size_t slot) const { return nodes_[tails_[slot]].next; }
  // The first occupied slot at or after `slot`, going round; the wheel must not be empty.
  size_t first_occupied_from(size_t slot) const;
  uint32_t allocate_node();

  Nanos floor_ = 0;
  Nanos front_when_ = kNever;  // time of the earliest event
  size_t size_ = 0;
  std::vector<uint32_t> tails_;              // per slot: its newest node, or kNone
  std::array<uint64_t, kWords> occupied_{};  // bit per slot: the slot holds events
  uint64_t occupied_words_ = 0;              // bit per word of occupied_: it has a bit set
  std::vector<Node> nodes_;
  uint32_t free_ = kNone;
};

}  // namespace etwire::clock

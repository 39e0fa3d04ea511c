// The output side of a switch port: one FIFO per 802.1p class, strict priority between classes
// (the highest class with a packet goes first), the pause state its link partner set with PFC
// frames, and the PFC frames this port owes its link partner. The queues hold packet-pool slot
// indexes and what leaving needs; the twin decides when the wire is free and moves the packets.
#pragma once

#include <array>
#include <bit>
#include <cstdint>
#include <utility>

#include "clock/time.h"
#include "common/ring_queue.h"
#include "twin/switch/queue_depth.h"
#include "twin/switch/switch_buffer.h"

namespace etwire::twin {

inline constexpr int kPriorities = 8;
inline constexpr uint32_t kNoSwitchPort = UINT32_MAX;

// A packet waiting in an egress queue, with what the switch needs when it leaves: its size, where
// its bytes are charged in the buffer and the ingress port whose PFC account holds it
// (kNoSwitchPort for a lossy class). Kept in the queue entry so that dequeueing reads the queue's
// own sequential memory, not the packet's slot, which is cold by then when queues are deep.
struct QueuedPacket {
  uint32_t slot = 0;
  uint32_t bytes = 0;
  BufferCharge charge;
  uint32_t pfc_ingress_port = kNoSwitchPort;
  bool ecn_capable = false;  // for marking on dequeue without touching the cold slot
};

struct EgressQueueStats {
  explicit EgressQueueStats(clock::Nanos start = 0) : depth(start) {}
  QueueDepth depth;  // bytes waiting, not counting the packet on the wire
  uint64_t enqueued_packets = 0;
  uint64_t drops = 0;  // tail drops of packets headed for this queue
  // Data packets headed for this queue that found no room and went on cut to their headers in
  // the trimming class (fabric.trimming); not drops.
  uint64_t trimmed = 0;
  uint64_t ecn_marked = 0;
};

class EgressPort {
 public:
  explicit EgressPort(clock::Nanos start = 0);

  void enqueue(uint8_t priority, const QueuedPacket& packet, clock::Nanos now) {
    queues_[priority].push_back(packet);
    stats_[priority].depth.add(packet.bytes, now);
    ++stats_[priority].enqueued_packets;
    nonempty_mask_ |= static_cast<uint8_t>(1u << priority);
  }

  // The class to send at `now`: the highest class holding a packet that is not paused, or -1.
  int next_class(clock::Nanos now) const {
    for (unsigned waiting = nonempty_mask_; waiting != 0;) {
      const int priority = std::bit_width(waiting) - 1;
      if (paused_until_[priority] <= now) return priority;
      waiting &= ~(1u << priority);
    }
    return -1;
  }

  size_t queued_packets(uint8_t priority) const { return queues_[priority].size(); }
  // The wire bytes of the oldest packet of a class that holds one.
  uint32_t front_bytes(uint8_t priority) const { return queues_[priority].front().bytes; }
  // The second packet of a class goes before the first (a reordering fault).
  void swap_first_two(uint8_t priority) {
    RingQueue<QueuedPacket>& queue = queues_[priority];
    std::swap(queue[0], queue[1]);
  }
  // Removes and returns the oldest packet of a class that holds one.
  QueuedPacket pop(uint8_t priority, clock::Nanos now) {
    RingQueue<QueuedPacket>& queue = queues_[priority];
    const QueuedPacket packet = queue.front();
    queue.pop_front();
    stats_[priority].depth.remove(packet.bytes, now);
    if (queue.empty()) nonempty_mask_ &= static_cast<uint8_t>(~(1u << priority));
    return packet;
  }

  // PFC received from the link partner: the class may not start a packet before `until` (a
  // resume passes `now`).
  void pause_until(uint8_t priority, clock::Nanos until) { paused_until_[priority] = until; }
  bool paused(uint8_t priority, clock::Nanos now) const { return paused_until_[priority] > now; }
  // When the first class that holds packets but is paused may send again (kNever if none).
  clock::Nanos earliest_resume(clock::Nanos now) const;

  // PFC frames owed to the link partner. A newer frame for a class replaces one not yet sent:
  // the partner only needs the latest state of each class.
  void owe_pfc_frame(uint8_t priority, uint16_t quanta) {
    pending_pfc_mask_ |= static_cast<uint8_t>(1u << priority);
    pending_quanta_[priority] = quanta;
  }
  bool owes_pfc_frame() const { return pending_pfc_mask_ != 0; }
  // Takes the owed frame of the highest class; owes_pfc_frame() must be true.
  void take_pfc_frame(uint8_t& priority, uint16_t& quanta) {
    priority = static_cast<uint8_t>(std::bit_width(static_cast<unsigned>(pending_pfc_mask_)) - 1);
    quanta = pending_quanta_[priority];
    pending_pfc_mask_ &= static_cast<uint8_t>(~(1u << priority));
  }

  // Anything to put on the wire, sendable now or not.
  bool has_work() const { return (nonempty_mask_ | pending_pfc_mask_) != 0; }
  // Starts loading what choosing the next start reads first: which classes wait, their pauses.
  void prefetch_choice() const {
    __builtin_prefetch(&nonempty_mask_);
    __builtin_prefetch(&paused_until_);
  }

  const EgressQueueStats& stats(uint8_t priority) const { return stats_[priority]; }
  EgressQueueStats& stats(uint8_t priority) { return stats_[priority]; }
  uint64_t depth_bytes(uint8_t priority) const { return stats_[priority].depth.bytes(); }
  // Bytes waiting in every class (what adaptive routing weighs a port by): summed when asked, so
  // that a fabric that never asks pays nothing per packet.
  uint64_t queued_bytes() const {
    uint64_t bytes = 0;
    for (unsigned waiting = nonempty_mask_; waiting != 0; waiting &= waiting - 1) {
      bytes += stats_[std::countr_zero(waiting)].depth.bytes();
    }
    return bytes;
  }

  // The port's pending wake-up event (the twin's bookkeeping): when it is due, kNever if none,
  // and the generation its tag carries; an event with an older generation is stale.
  clock::Nanos wake_at = clock::kNever;
  uint32_t wake_generation = 0;

 private:
  std::array<RingQueue<QueuedPacket>, kPriorities> queues_;
  std::array<EgressQueueStats, kPriorities> stats_;
  std::array<clock::Nanos, kPriorities> paused_until_{};
  std::array<uint16_t, kPriorities> pending_quanta_{};
  uint8_t nonempty_mask_ = 0;
  uint8_t pending_pfc_mask_ = 0;
};

}  // namespace etwire::twin

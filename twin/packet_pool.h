// Where the twin keeps the packets it is carrying. A packet is copied in once when a NIC port
// transmits it and out once when it is delivered; in between, links and queues pass a 32-bit
// slot index around instead of copying the Packet at every hop. Released slots are reused
// (a free list), so the pool stops allocating once it has held the largest number of packets the
// fabric holds at one time. Each slot is aligned to a cache line: a packet that has gone cold in a
// deep queue costs one cache miss when it is next touched, not two.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "nic/packet.h"

namespace etwire::twin {

class PacketPool {
 public:
  // Copies `packet` into a free slot and returns the slot's index. May grow the pool, which
  // invalidates references to slots (indexes stay valid).
  uint32_t acquire(const nic::Packet& packet) {
    uint32_t index;
    if (!free_.empty()) {
      index = free_.back();
      free_.pop_back();
    } else {
      index = static_cast<uint32_t>(slots_.size());
      slots_.emplace_back();
    }
    slots_[index].packet = packet;
    return index;
  }

  nic::Packet& operator[](uint32_t index) { return slots_[index].packet; }
  const nic::Packet& operator[](uint32_t index) const { return slots_[index].packet; }

  void release(uint32_t index) { free_.push_back(index); }

  // Whether `index` names a slot (free or not); for hints that may have gone stale.
  bool holds(uint32_t index) const { return index < slots_.size(); }
  // Packets currently held (on a wire or in a switch queue).
  size_t live() const { return slots_.size() - free_.size(); }

 private:
  struct alignas(64) Slot {
    nic::Packet packet;
  };
  std::vector<Slot> slots_;
  std::vector<uint32_t> free_;
};

}  // namespace etwire::twin

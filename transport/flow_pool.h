// Storage for the flows in progress: one slot each, recycled through a free list, linked into
// their QP's queue by index. Posting a flow allocates nothing once the pool has grown to the
// largest number of flows in progress at once.
#pragma once

#include <cstdint>
#include <vector>

#include "clock/time.h"
#include "transport/flow_record.h"

namespace etwire::transport {

inline constexpr uint32_t kNoFlow = UINT32_MAX;

// A flow in progress: its FlowRecord's fields (see there) but the ports and QP numbers, which its
// requester QP holds and Transport::record_of adds when the record is reported. Every flow in
// progress has a slot (a million in a 1024-rank all-to-all), so every byte counts.
struct FlowSlot {
  // First, so that the narrow members after it fill its tail padding.
  [[no_unique_address]] FlowTags tags;
  FlowStatus status = FlowStatus::kCompleted;
  uint32_t packets = 0;
  uint32_t retransmitted_packets = 0;
  uint32_t cnps = 0;
  uint32_t ecn_marks = 0;
  uint32_t next = kNoFlow;  // next flow of the same QP (posting order)
  uint64_t flow_id = 0;
  uint64_t bytes = 0;
  uint64_t first_psn = 0;  // PSN of the flow's first packet on its QP
  clock::Nanos posted_at = 0;
  clock::Nanos first_byte_out = clock::kNever;
  clock::Nanos delivered_at = clock::kNever;
  clock::Nanos finished_at = clock::kNever;
};

class FlowPool {
 public:
  uint32_t acquire() {
    if (free_ != kNoFlow) {
      const uint32_t slot = free_;
      free_ = slots_[slot].next;
      slots_[slot] = FlowSlot{};
      ++in_use_;
      return slot;
    }
    slots_.emplace_back();
    ++in_use_;
    return static_cast<uint32_t>(slots_.size() - 1);
  }

  void release(uint32_t slot) {
    slots_[slot].next = free_;
    free_ = slot;
    --in_use_;
  }

  FlowSlot& operator[](uint32_t slot) { return slots_[slot]; }
  const FlowSlot& operator[](uint32_t slot) const { return slots_[slot]; }

  uint32_t in_use() const { return in_use_; }
  uint64_t memory_bytes() const { return slots_.capacity() * sizeof(FlowSlot); }

 private:
  std::vector<FlowSlot> slots_;
  uint32_t free_ = kNoFlow;
  uint32_t in_use_ = 0;
};

}  // namespace etwire::transport

// Storage for the flows in progress: one slot each, recycled through a free list, linked into
// their QP's queue by index. Posting a flow allocates nothing once the pool has grown to the
// largest number of flows in progress at once.
#pragma once

#include <cstdint>
#include <vector>

#include "transport/flow_record.h"

namespace etwire::transport {

inline constexpr uint32_t kNoFlow = UINT32_MAX;

struct FlowSlot {
  FlowRecord record;
  uint64_t first_psn = 0;   // PSN of the flow's first packet on its QP
  uint32_t next = kNoFlow;  // next flow of the same QP (posting order)
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

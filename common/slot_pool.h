// Values kept in numbered slots that are reused once released (a free list), so a pool that has
// held its peak number of values stores and releases without allocating. Slot numbers stay valid
// as the pool grows; references to values do not.
#pragma once

#include <cstdint>
#include <vector>

namespace etwire {

template <typename T>
class SlotPool {
 public:
  // Stores `value` in a free slot and returns the slot's number.
  uint32_t put(const T& value) {
    uint32_t slot;
    if (free_.empty()) {
      slot = static_cast<uint32_t>(values_.size());
      values_.push_back(value);
    } else {
      slot = free_.back();
      free_.pop_back();
      values_[slot] = value;
    }
    return slot;
  }

  // The value in `slot`, which is free again.
  T take(uint32_t slot) {
    free_.push_back(slot);
    return values_[slot];
  }

 private:
  std::vector<T> values_;
  std::vector<uint32_t> free_;
};

}  // namespace etwire

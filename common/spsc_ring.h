// A bounded ring between exactly two threads: one pushes, the other pops. Lock-free and
// allocation-free after construction: each side writes only its own position (on its own cache
// line) and reads the other's with acquire ordering, so a slot's contents are visible before the
// position that publishes it. What to do when the ring is full is the caller's choice (drop and
// count, or keep the item and retry later).
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <stdexcept>

namespace etwire {

template <typename T>
class SpscRing {
 public:
  // `capacity` must be a power of two.
  explicit SpscRing(size_t capacity) : slots_(new T[capacity]), mask_(capacity - 1) {
    if (capacity == 0 || (capacity & mask_) != 0) {
      throw std::invalid_argument("ring capacity must be a power of two");
    }
  }
  SpscRing(const SpscRing&) = delete;
  SpscRing& operator=(const SpscRing&) = delete;

  // Producer side. False when the ring is full (the item is not taken).
  bool try_push(const T& item) noexcept {
    const uint64_t tail = tail_.load(std::memory_order_relaxed);
    if (tail - head_seen_ > mask_) {
      head_seen_ = head_.load(std::memory_order_acquire);
      if (tail - head_seen_ > mask_) return false;
    }
    slots_[tail & mask_] = item;
    tail_.store(tail + 1, std::memory_order_release);
    return true;
  }

  // Consumer side: hands every item pushed so far to `consume`, oldest first; returns how many.
  template <typename Consume>
  size_t drain(Consume&& consume) {
    const uint64_t head = head_.load(std::memory_order_relaxed);
    const uint64_t tail = tail_.load(std::memory_order_acquire);
    for (uint64_t i = head; i != tail; ++i) consume(slots_[i & mask_]);
    head_.store(tail, std::memory_order_release);
    return static_cast<size_t>(tail - head);
  }

  size_t capacity() const { return mask_ + 1; }

 private:
  std::unique_ptr<T[]> slots_;
  const uint64_t mask_;
  alignas(64) std::atomic<uint64_t> tail_{0};
  uint64_t head_seen_ = 0;  // the producer's last look at head_
  alignas(64) std::atomic<uint64_t> head_{0};
};

}  // namespace etwire

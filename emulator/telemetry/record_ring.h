// A bounded single-producer single-consumer ring of telemetry records: one per data-plane worker,
// written by that worker only and read by the exporter's aggregator thread only. Pushing never
// blocks and never allocates: when the ring is full the record is dropped and counted (the
// exporter reports the count as etwire_telemetry_records_dropped_total), because a worker must
// not wait for telemetry.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <stdexcept>

#include "emulator/telemetry/telemetry_record.h"

namespace etwire::telemetry {

class RecordRing {
 public:
  // `capacity` must be a power of two.
  explicit RecordRing(size_t capacity) : slots_(new Record[capacity]), mask_(capacity - 1) {
    if (capacity == 0 || (capacity & mask_) != 0) {
      throw std::invalid_argument("record ring capacity must be a power of two");
    }
  }
  RecordRing(const RecordRing&) = delete;
  RecordRing& operator=(const RecordRing&) = delete;

  // Producer side. False (and counted) when the ring is full.
  bool push(const Record& record) noexcept {
    const uint64_t tail = tail_.load(std::memory_order_relaxed);
    if (tail - head_seen_ > mask_) {
      head_seen_ = head_.load(std::memory_order_acquire);
      if (tail - head_seen_ > mask_) {
        dropped_.store(dropped_.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
        return false;
      }
    }
    slots_[tail & mask_] = record;
    tail_.store(tail + 1, std::memory_order_release);
    return true;
  }

  // Consumer side: hands every record pushed so far to `consume`, oldest first; returns how many.
  template <typename Consume>
  size_t drain(Consume&& consume) {
    const uint64_t head = head_.load(std::memory_order_relaxed);
    const uint64_t tail = tail_.load(std::memory_order_acquire);
    for (uint64_t i = head; i != tail; ++i) consume(slots_[i & mask_]);
    head_.store(tail, std::memory_order_release);
    return static_cast<size_t>(tail - head);
  }

  // Records dropped so far because the ring was full (readable from either side).
  uint64_t dropped() const { return dropped_.load(std::memory_order_relaxed); }
  size_t capacity() const { return mask_ + 1; }

 private:
  std::unique_ptr<Record[]> slots_;
  const uint64_t mask_;
  // Producer and consumer positions on their own cache lines, so neither side's writes slow the
  // other's reads.
  alignas(64) std::atomic<uint64_t> tail_{0};
  uint64_t head_seen_ = 0;  // the producer's last look at head_
  std::atomic<uint64_t> dropped_{0};
  alignas(64) std::atomic<uint64_t> head_{0};
};

}  // namespace etwire::telemetry

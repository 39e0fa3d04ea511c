// A bounded single-producer single-consumer ring of telemetry records: one per data-plane worker,
// written by that worker only and read by the exporter's aggregator thread only. Pushing never
// blocks and never allocates: when the ring is full the record is dropped and counted (the
// exporter reports the count as etwire_telemetry_records_dropped_total), because a worker must
// not wait for telemetry.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <utility>

#include "common/spsc_ring.h"
#include "engine/telemetry/telemetry_record.h"

namespace etwire::telemetry {

class RecordRing {
 public:
  // `capacity` must be a power of two.
  explicit RecordRing(size_t capacity) : ring_(capacity) {}

  // Producer side. False (and counted) when the ring is full.
  bool push(const Record& record) noexcept {
    if (ring_.try_push(record)) return true;
    dropped_.store(dropped_.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
    return false;
  }

  // Consumer side: hands every record pushed so far to `consume`, oldest first; returns how many.
  template <typename Consume>
  size_t drain(Consume&& consume) {
    return ring_.drain(std::forward<Consume>(consume));
  }

  // Records dropped so far because the ring was full (readable from either side).
  uint64_t dropped() const { return dropped_.load(std::memory_order_relaxed); }
  size_t capacity() const { return ring_.capacity(); }

 private:
  SpscRing<Record> ring_;
  std::atomic<uint64_t> dropped_{0};
};

}  // namespace etwire::telemetry

// A port's counters as a worker core hands them to the main lcore. The worker owns the counters
// and publishes a copy now and then; the main lcore reads the latest copy whenever it reports.
// A sequence number around each copy (a seqlock) keeps a reader from taking half of one copy
// and half of the next, without a lock either side could wait on.
#pragma once

#include <array>
#include <atomic>
#include <bit>
#include <cstdint>
#include <type_traits>

#include "dataplane/port_counters.h"

namespace etwire::dataplane {

struct PortSample {
  PortCounters counters;
  uint64_t paced_rate_bps = 0;  // what the port's QPs with data may send now (telemetry)
  uint64_t rx_handed_over = 0;  // a queue's arrivals that another queue of the port drives
};

// Every field is a count or a rate, so the queues of one port add up field by field.
inline PortSample& operator+=(PortSample& total, const PortSample& more) {
  total.counters += more.counters;
  total.paced_rate_bps += more.paced_rate_bps;
  total.rx_handed_over += more.rx_handed_over;
  return total;
}

class PublishedPortSample {
 public:
  // Worker side.
  void publish(const PortSample& sample) {
    const auto words = std::bit_cast<std::array<uint64_t, kWords>>(sample);
    const uint64_t sequence = sequence_.load(std::memory_order_relaxed);
    sequence_.store(sequence + 1, std::memory_order_relaxed);  // odd: a copy is being written
    std::atomic_thread_fence(std::memory_order_release);
    for (size_t i = 0; i < kWords; ++i) words_[i].store(words[i], std::memory_order_relaxed);
    sequence_.store(sequence + 2, std::memory_order_release);
  }

  // Main side: the latest whole copy.
  PortSample read() const {
    std::array<uint64_t, kWords> words;
    while (true) {
      const uint64_t before = sequence_.load(std::memory_order_acquire);
      if ((before & 1) != 0) continue;
      for (size_t i = 0; i < kWords; ++i) words[i] = words_[i].load(std::memory_order_relaxed);
      std::atomic_thread_fence(std::memory_order_acquire);
      if (sequence_.load(std::memory_order_relaxed) == before) break;
    }
    return std::bit_cast<PortSample>(words);
  }

 private:
  static constexpr size_t kWords = sizeof(PortSample) / sizeof(uint64_t);
  static_assert(sizeof(PortSample) == kWords * sizeof(uint64_t));
  static_assert(std::is_trivially_copyable_v<PortSample>);
  std::atomic<uint64_t> sequence_{0};
  std::array<std::atomic<uint64_t>, kWords> words_{};
};

}  // namespace etwire::dataplane

// A port's counters as a worker core hands them to the main lcore. The worker owns the counters
// and publishes a copy now and then; the main lcore reads the latest copy whenever it reports.
// A sequence number around each copy (a seqlock) keeps a reader from taking half of one copy
// and half of the next, without a lock either side could wait on.
#pragma once

#include <array>
#include <atomic>
#include <bit>
#include <cstdint>

namespace etwire::engine {

struct PortSample {
  uint64_t tx_bytes = 0;
  uint64_t rx_bytes = 0;
  uint64_t tx_packets = 0;
  uint64_t rx_packets = 0;
  uint64_t data_packets = 0;
  uint64_t retransmitted_packets = 0;
  uint64_t ecn_marked_received = 0;
  uint64_t cnps_sent = 0;
  uint64_t cnps_received = 0;
  uint64_t pfc_pauses_sent = 0;
  uint64_t pfc_pauses_received = 0;
  uint64_t drops = 0;
  uint64_t timeouts = 0;
  uint64_t paced_rate_bps = 0;  // what the port's QPs with data may send now (telemetry)
  uint64_t rx_handed_over = 0;  // a queue's arrivals that another queue of the port drives
};

// Every field is a count or a rate, so the queues of one port add up field by field.
inline PortSample& operator+=(PortSample& total, const PortSample& more) {
  constexpr size_t kFields = sizeof(PortSample) / sizeof(uint64_t);
  static_assert(sizeof(PortSample) == kFields * sizeof(uint64_t));
  auto sum = std::bit_cast<std::array<uint64_t, kFields>>(total);
  const auto add = std::bit_cast<std::array<uint64_t, kFields>>(more);
  for (size_t i = 0; i < kFields; ++i) sum[i] += add[i];
  total = std::bit_cast<PortSample>(sum);
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
  std::atomic<uint64_t> sequence_{0};
  std::array<std::atomic<uint64_t>, kWords> words_{};
};

}  // namespace etwire::engine

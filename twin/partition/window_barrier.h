// The barrier between the phases of a window of the partitioned twin (partitioned_twin.cc). A
// window is short (well under a millisecond of work at 1024 ranks) and a run has hundreds of
// thousands, so a thread that waits first yields its core for a while, which on a free core
// returns at once and finds the others there soon after, and only then sleeps. std::barrier
// sleeps sooner, and its wake-ups cost a 1024-rank run on two threads a seventh to a quarter of its
// time (docs/performance.md, "The twin over processes"). Yielding rather than spinning keeps a
// machine with fewer free cores than threads (taskset, other work) moving.
#pragma once

#include <atomic>
#include <cstdint>
#include <thread>

namespace etwire::twin {

class WindowBarrier {
 public:
  explicit WindowBarrier(uint32_t parties) : parties_(parties) {}
  WindowBarrier(const WindowBarrier&) = delete;
  WindowBarrier& operator=(const WindowBarrier&) = delete;

  // Returns once all parties arrived; what each did before it is visible to all after.
  void arrive_and_wait() {
    const uint32_t generation = generation_.load(std::memory_order_acquire);
    if (arrived_.fetch_add(1, std::memory_order_acq_rel) + 1 == parties_) {
      arrived_.store(0, std::memory_order_relaxed);
      generation_.store(generation + 1, std::memory_order_release);
      generation_.notify_all();
      return;
    }
    for (uint32_t round = 0; round < kYields; ++round) {
      if (generation_.load(std::memory_order_acquire) != generation) return;
      std::this_thread::yield();
    }
    while (generation_.load(std::memory_order_acquire) == generation) {
      generation_.wait(generation, std::memory_order_acquire);
    }
  }

 private:
  // About a millisecond of yields on a free core before sleeping.
  static constexpr uint32_t kYields = 2048;
  const uint32_t parties_;
  std::atomic<uint32_t> arrived_{0};
  std::atomic<uint32_t> generation_{0};
};

}  // namespace etwire::twin

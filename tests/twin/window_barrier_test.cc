// The barrier of the partitioned twin's windows: no thread passes it before every thread arrived,
// and what each wrote before arriving is seen by all after, round after round; with more
// threads than cores too (a waiting thread yields, then sleeps).
#include "twin/partition/window_barrier.h"

#include <gtest/gtest.h>

#include <atomic>
#include <cstdint>
#include <thread>
#include <vector>

namespace etwire::twin {
namespace {

TEST(WindowBarrier, NoThreadPassesARoundBeforeEveryThreadWroteIt) {
  constexpr uint32_t kThreads = 5;  // more than the cores of the machines the tests run on
  constexpr uint32_t kRounds = 2000;
  WindowBarrier barrier(kThreads);
  // Plain (non-atomic) slots: the barrier must order them.
  std::vector<uint32_t> written(kThreads, 0);
  std::atomic<uint32_t> wrong{0};
  std::vector<std::thread> threads;
  for (uint32_t t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (uint32_t round = 1; round <= kRounds; ++round) {
        written[t] = round;
        barrier.arrive_and_wait();
        for (uint32_t other = 0; other < kThreads; ++other) {
          if (written[other] != round) wrong.fetch_add(1);
        }
        // Nobody writes the next round before everyone read this one.
        barrier.arrive_and_wait();
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  EXPECT_EQ(wrong.load(), 0u);
}

}  // namespace
}  // namespace etwire::twin

#include "nic/dpdk/interrupt_thread.h"

#include <rte_alarm.h>

#include <atomic>
#include <chrono>
#include <thread>

namespace etwire::nic::dpdk {

namespace {

struct Errand {
  const std::function<void()>* work;
  std::atomic<bool> done{false};
};

// An alarm's callback runs on the interrupt thread, between the driver callbacks there.
void run_errand(void* arg) {
  auto* errand = static_cast<Errand*>(arg);
  (*errand->work)();
  errand->done.store(true, std::memory_order_release);
}

}  // namespace

void run_on_interrupt_thread(const std::function<void()>& work) {
  Errand errand{&work};
  if (rte_eal_alarm_set(1, run_errand, &errand) != 0) {
    work();
    return;
  }
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (!errand.done.load(std::memory_order_acquire)) {
    if (std::chrono::steady_clock::now() >= give_up) {
      // Cancelling waits for a callback already running; one cancelled never runs.
      if (rte_eal_alarm_cancel(run_errand, &errand) > 0) work();
      return;
    }
    std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
}

}  // namespace etwire::nic::dpdk

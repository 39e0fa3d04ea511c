#include "clock/wall_clock.h"

#include <chrono>
#include <stdexcept>
#include <thread>

#if defined(__x86_64__)
#include <x86intrin.h>
#endif

namespace etwire::clock {

namespace {

int64_t system_nanos() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

uint64_t read_ticks() {
#if defined(__x86_64__)
  return __rdtsc();
#else
  return 0;
#endif
}

}  // namespace

WallClock::WallClock(Nanos calibration) {
  origin_system_ns_ = system_nanos();
  origin_ticks_ = read_ticks();
  if (origin_ticks_ == 0) return;  // no counter on this architecture: use the system clock
  std::this_thread::sleep_for(std::chrono::nanoseconds(calibration));
  const double ticks = static_cast<double>(read_ticks() - origin_ticks_);
  const double nanos = static_cast<double>(system_nanos() - origin_system_ns_);
  if (ticks <= 0 || nanos <= 0) {
    origin_ticks_ = 0;
    return;
  }
  ticks_per_nano_ = ticks / nanos;
  nanos_per_tick_ = nanos / ticks;
}

void WallClock::restart() {
  if (!queue_.empty()) throw std::logic_error("WallClock::restart with events pending");
  origin_system_ns_ = system_nanos();
  if (nanos_per_tick_ > 0) origin_ticks_ = read_ticks();
}

void WallClock::share_time_with(const WallClock& reference) {
  if (!queue_.empty()) throw std::logic_error("WallClock::share_time_with with events pending");
  origin_ticks_ = reference.origin_ticks_;
  origin_system_ns_ = reference.origin_system_ns_;
  ticks_per_nano_ = reference.ticks_per_nano_;
  nanos_per_tick_ = reference.nanos_per_tick_;
}

Nanos WallClock::now() const {
  if (origin_ticks_ == 0) return system_nanos() - origin_system_ns_;
  return static_cast<Nanos>(static_cast<double>(read_ticks() - origin_ticks_) * nanos_per_tick_);
}

void WallClock::run_at(Nanos when, EventHandler* handler, uint64_t tag) {
  queue_.push(when, handler, tag);
}

uint64_t WallClock::poll() {
  // Reading the counter costs as much as a light event (more in a virtual machine): it is read
  // once when nothing is due, again only every few events while they run (so a handler's `now`
  // is at most a few events stale), and once after the last of them for last_read().
  constexpr uint64_t kEventsPerRead = 8;
  uint64_t ran = 0;
  Nanos t = now();
  bool fresh = true;  // no event ran since `t` was read
  while (ran < kPollBudget && !queue_.empty()) {
    if (queue_.next_time() > t) {
      if (fresh) break;
      t = now();
      fresh = true;
      if (queue_.next_time() > t) break;
    }
    ScheduledEvent event = queue_.pop();
    event.handler->on_event(event.tag, t);
    fresh = false;
    if (++ran % kEventsPerRead == 0) {
      t = now();
      fresh = true;
    }
  }
  last_read_ = fresh ? t : now();
  return ran;
}

}  // namespace etwire::clock

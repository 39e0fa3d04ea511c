// One pending event of a scheduler: when it is due, its place in scheduling order (which keeps
// events due at the same nanosecond in the order they were scheduled), and whom to call.
#pragma once

#include <cstdint>

#include "clock/scheduler.h"

namespace etwire::clock {

struct ScheduledEvent {
  Nanos when = 0;
  uint64_t sequence = 0;  // tie-breaker: deterministic order for events due at the same time
  EventHandler* handler = nullptr;
  uint64_t tag = 0;
};

}  // namespace etwire::clock

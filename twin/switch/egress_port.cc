#include "twin/switch/egress_port.h"

#include <algorithm>

namespace etwire::twin {

EgressPort::EgressPort(clock::Nanos start) {
  stats_.fill(EgressQueueStats(start));
  paused_until_.fill(start);
}

clock::Nanos EgressPort::earliest_resume(clock::Nanos now) const {
  clock::Nanos earliest = clock::kNever;
  for (int priority = 0; priority < kPriorities; ++priority) {
    if ((nonempty_mask_ >> priority) & 1u && paused_until_[priority] > now) {
      earliest = std::min(earliest, paused_until_[priority]);
    }
  }
  return earliest;
}

}  // namespace etwire::twin

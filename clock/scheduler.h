// The one scheduling interface the transport, pacers and congestion control are written against.
// Two implementations: VirtualClock (discrete events, deterministic, as fast as the CPU allows)
// for the loopback NIC and its fabric twin, and WallClock (real time, busy-polled) for hardware
// backends. Code above this interface never knows which one it runs on.
#pragma once

#include <cstdint>

#include "clock/time.h"

namespace etwire::clock {

// Receives the events it scheduled. `tag` is whatever the handler passed to run_at(): handlers
// typically pack an object index and a generation number into it, so a re-armed timer makes the
// older event stale instead of needing a cancel (no search through the queue, no allocation).
class EventHandler {
 public:
  virtual void on_event(uint64_t tag, Nanos now) = 0;
  // The event `tag` is due next: the virtual clock says so while the one before it runs, so that
  // the state it will touch can start loading into the cache. A hint only: it changes nothing.
  virtual void prefetch(uint64_t /*tag*/) const {}

 protected:
  ~EventHandler() = default;
};

class Scheduler {
 public:
  virtual ~Scheduler() = default;
  virtual Nanos now() const = 0;
  // Calls handler->on_event(tag, t) at time `when` (at once on the next poll if `when` has
  // passed). Events due at the same time run in the order they were scheduled.
  virtual void run_at(Nanos when, EventHandler* handler, uint64_t tag) = 0;
  // Runs the events that are due. Virtual clock: advances time to the earliest event and runs
  // everything due then; wall clock: runs what is due now. Returns the number of events run.
  virtual uint64_t poll() = 0;
  // True when no event is scheduled.
  virtual bool idle() const = 0;
};

}  // namespace etwire::clock

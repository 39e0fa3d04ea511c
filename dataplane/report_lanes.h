// The engine's work on a partitioned twin's window of flow reports, run on the window's threads
// instead of alone between windows (PartitionedDataPlane). A delivery moves its receiver's step
// program on and a finish its sender's, and what either then posts leaves from that member's own
// port: so most of a window's work falls apart by partition, one lane each. The data plane hands
// each lane the reports of its members, in the engine's order; the engine first says whether
// every lane can take its reports without touching what another lane or its own thread holds
// (a member finishing, a node completing, a failed flow...), and only if all can do the lanes
// take them; otherwise the window goes the engine's serial way. What the lanes made (their
// posts) the engine's thread then settles instant by instant, in the order it would have made it,
// so results are the same either way.
#pragma once

#include <cstdint>
#include <span>

#include "clock/time.h"
#include "dataplane/flow_join.h"

namespace etwire::dataplane {

// What the join told of a window's report, and where it falls in the engine's order: by time,
// then report (partition << 32 | index there), then `step` among what the join told of it.
struct LaneReport {
  clock::Nanos at = 0;
  uint64_t report = 0;
  uint32_t step = 0;
  const FlowJoin::Told* told = nullptr;
};

class ReportLanes {
 public:
  // Between windows, once, before any lane is used: one lane per partition.
  virtual void open_lanes(uint32_t lanes) = 0;
  // On a window's thread, for each lane at once (one thread per lane): whether `lane` can take
  // its reports of the window (in order) alone. Only reads.
  virtual bool lane_can_take(uint32_t lane, std::span<const LaneReport> reports) = 0;
  // On a window's thread, once every lane said it can: takes them.
  virtual void take_in_lane(uint32_t lane, std::span<const LaneReport> reports) = 0;
  // On the engine's thread, its clock at the instant of `reports` (every lane's of that instant,
  // in order): what the engine does with them there, and what the lanes made of them.
  virtual void settle_instant(std::span<const LaneReport> reports) = 0;

 protected:
  ~ReportLanes() = default;
};

}  // namespace etwire::dataplane

// What the fabric twin reports of one of its switch egress queues (FabricTwin::queue,
// for_each_queue): telemetry and queues.csv read these.
#pragma once

#include <cstdint>

namespace etwire::twin {

// One switch egress queue (switch port x priority) as telemetry sees it.
struct QueueSample {
  uint32_t switch_port = 0;  // global index: FabricLayout::switch_port() describes it
  uint8_t priority = 0;
  uint64_t depth_bytes = 0;  // waiting, not counting the packet on the wire
  uint32_t depth_packets = 0;
  uint64_t max_depth_bytes = 0;
  double average_depth_bytes = 0;  // time-weighted, since the twin was built
  uint64_t enqueued_packets = 0;
  uint64_t drops = 0;
  uint64_t trimmed = 0;  // cut to their headers instead of dropped (fabric.trimming)
  uint64_t ecn_marked = 0;
  bool paused = false;  // PFC from the link partner holds this class now
};

}  // namespace etwire::twin

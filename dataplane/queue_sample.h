// Samples of the fabric twin's switch egress queues, taken every telemetry.record
// .queue_sample_interval of virtual time (the loopback data plane), for queues.csv: each queue's
// depth then, and the utilization of the link it drains into over the interval before.
#pragma once

#include <cstdint>
#include <string_view>

#include "clock/time.h"

namespace etwire::dataplane {

struct QueueRow {
  clock::Nanos at = 0;
  uint32_t switch_port = 0;  // the twin's global index
  uint8_t priority = 0;
  uint64_t depth_bytes = 0;  // waiting, not counting the packet on the wire
  uint32_t depth_packets = 0;
  uint64_t max_depth_bytes = 0;  // since the run began
  uint64_t ecn_marked = 0;       // so far
  uint64_t drops = 0;            // so far
  bool paused = false;           // PFC holds the class now
  // The port's link over the interval before: wire bytes sent / what its speed carries then.
  double utilization = 0;
};

class QueueSink {
 public:
  // `switch_port` names the row's port ("leaf0/spine1"); valid during the call only.
  virtual void append(const QueueRow& row, std::string_view switch_port) = 0;

 protected:
  ~QueueSink() = default;
};

}  // namespace etwire::dataplane

// Samples of the fabric twin's switch egress queues, taken every telemetry.record
// .queue_sample_interval of virtual time (the loopback data plane), for queues.csv: each queue's
// depth then, and the utilization of the link it drains into over the interval before.
#pragma once

#include <cstdint>
#include <string_view>

#include "clock/time.h"
#include "twin/queue_sample.h"

namespace etwire::dataplane {

struct QueueRow {
  clock::Nanos at = 0;
  twin::QueueSample queue;  // the queue then (counts since the run began)
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

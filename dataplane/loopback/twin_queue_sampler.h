// telemetry.record.queue_sample_interval on the fabric twin: samples its switch egress queues at
// every multiple of the interval, from outside the clock's events. Whoever runs the twin's clock
// calls take_until(t) before it runs the events due at t, so sampling adds no event and changes
// nothing a run does; the state a sample shows is the one after every event up to its time.
// The loopback data plane samples every switch port; a partitioned twin has a sampler in each
// partition for the switch ports that partition owns.
#pragma once

#include <cstdint>
#include <vector>

#include "clock/time.h"
#include "dataplane/queue_row.h"
#include "twin/fabric/fabric_twin.h"

namespace etwire::dataplane {

class TwinQueueSampler {
 public:
  // Samples the switch ports of `twin` whose entry in `sampled` is true (by global index; empty:
  // all of them) every `interval` into `sink`. `twin` and `sink` must outlive the sampler.
  TwinQueueSampler(const twin::FabricTwin& twin, QueueSink& sink, clock::Nanos interval,
                   std::vector<bool> sampled = {});

  // Takes the samples due before `until` (the time of the next events).
  void take_until(clock::Nanos until);

 private:
  void take(clock::Nanos at);

  const twin::FabricTwin& twin_;
  QueueSink& sink_;
  clock::Nanos interval_;
  clock::Nanos next_;
  bool quiet_ = false;
  std::vector<uint32_t> ports_;          // the sampled switch ports, in index order
  std::vector<uint64_t> last_tx_bytes_;  // by switch port
  std::vector<double> utilization_;      // by switch port, over the last interval
};

}  // namespace etwire::dataplane

// The time series of port counters (telemetry.record.port_sample_interval): every port's running
// totals and paced rate at each multiple of the interval on the data plane's clock, sent to a
// PortSeriesSink (ports.csv).
//
// The engine calls it from its loop, between the data plane's polls, so sampling adds no event
// and no per-packet work. In virtual time a sample at T is taken once the next pending event is
// after T, so it shows the state after every event up to T. On the wall clock a sample is taken
// at the first poll at or after its time and carries the time it was read.
//
// Stretches where no counter and no paced rate of any port changes (compute phases, a stalled
// fabric) are not written sample by sample: the first quiet sample after activity is (rates fall
// to zero there), then nothing until the sample just before the next change, which is written
// with it. So the difference between two consecutive rows is exact over their interval, and an
// idle minute costs two rows. The first row is at the run's start, the last at its end.
//
// Storage is sized once at construction: taking a sample allocates nothing (beyond what the data
// plane's DataPlane::port_counters does: nothing on the twin or DPDK; an RNIC reads sysfs).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "clock/time.h"
#include "dataplane/data_plane.h"
#include "engine/port_series_sink.h"

namespace etwire::engine {

class PortSampler {
 public:
  // Samples the ports this process drives (a port another emulator process drives is left to
  // that process). `interval_ns` > 0.
  PortSampler(dataplane::DataPlane& data_plane, clock::Nanos interval_ns, PortSeriesSink& sink);

  // The first row: the counters at the run's start.
  void start(clock::Nanos now);
  // Virtual time: takes the samples due before `next_event` (the time of the next pending event).
  // Called before every poll: the common case, nothing due, is one comparison.
  void take_before(clock::Nanos next_event) {
    if (next_ < next_event) take_samples_before(next_event);
  }
  // Wall clock: takes a sample when one is due by `now`.
  void take_due(clock::Nanos now) {
    if (next_ <= now) take_sample_at(now);
  }
  // The last row: the counters once the run has ended (after DataPlane::finish()).
  void finish(clock::Nanos now);

  uint64_t samples() const { return samples_; }

 private:
  // Reads every sampled port; true when anything differs from the previous sample.
  bool read();
  void write(const std::vector<dataplane::PortCounters>& counters, const std::vector<double>& rates,
             clock::Nanos at);
  void take(clock::Nanos at);
  void take_samples_before(clock::Nanos next_event);
  void take_sample_at(clock::Nanos now);

  dataplane::DataPlane& data_plane_;
  clock::Nanos interval_;
  PortSeriesSink& sink_;
  clock::Nanos next_ = 0;
  std::vector<size_t> ports_;  // the sampled ports' indexes
  std::vector<std::string> names_;
  std::vector<uint32_t> absent_;
  std::vector<dataplane::PortCounters> current_;
  std::vector<dataplane::PortCounters> previous_;
  std::vector<double> rates_;          // every port of the data plane (paced_rates_bps)
  std::vector<double> current_rates_;  // the sampled ports'
  std::vector<double> previous_rates_;
  bool previous_written_ = false;
  bool holding_ = false;  // the previous sample was quiet and not written
  clock::Nanos previous_at_ = 0;
  clock::Nanos last_written_at_ = -1;
  uint64_t samples_ = 0;
};

}  // namespace etwire::engine

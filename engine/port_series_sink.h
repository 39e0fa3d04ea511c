// Where the run engine sends its time series of port counters
// (telemetry.record.port_sample_interval; ports.csv is one): every port's running totals at each
// sample time. Called from the engine's loop, never per packet.
#pragma once

#include <cstdint>
#include <string_view>

#include "clock/time.h"
#include "dataplane/port_counters.h"

namespace etwire::engine {

struct PortSeriesRow {
  clock::Nanos at = 0;  // the data plane's clock: virtual on the twin, wall on a device
  std::string_view port;
  const dataplane::PortCounters* counters = nullptr;  // running totals since the run began
  // Counters the port's device does not count (port_counter_bit); their values are meaningless.
  uint32_t absent = 0;
  double paced_rate_bps = 0;  // what the port's QPs with data may send then (DCQCN)
};

class PortSeriesSink {
 public:
  // `row.port` and `row.counters` are valid during the call only.
  virtual void append(const PortSeriesRow& row) = 0;

 protected:
  ~PortSeriesSink() = default;
};

}  // namespace etwire::engine

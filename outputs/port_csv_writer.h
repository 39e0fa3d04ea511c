// ports.csv (telemetry.record.port_sample_interval): the header, then one line per port per
// sample: time_ns, port, every counter of kPortCounterFields as a running total (empty where the
// port's device does not count it), paced_rate_bps. Rows of one sample share their time_ns.
#pragma once

#include <cstdint>
#include <string>

#include "engine/port_series_sink.h"
#include "outputs/results_files.h"

namespace etwire::outputs {

class PortCsvWriter final : public engine::PortSeriesSink {
 public:
  explicit PortCsvWriter(std::string path);

  void append(const engine::PortSeriesRow& row) override;
  // Flushes and closes the file; append() after close() throws.
  void close() { file_.close(); }
  const std::string& path() const { return file_.path(); }
  uint64_t rows() const { return rows_; }

 private:
  StreamedFile file_;
  uint64_t rows_ = 0;
};

}  // namespace etwire::outputs

// What a run writes as it goes, besides the results files written at its end: the telemetry
// (Prometheus metrics served or pushed), flows.csv (each flow as it finishes; under MPI, every
// process's kept for process 0), nodes.csv (each node that took time as it completes; not in a
// split run), queues.csv and ports.csv (samples over time).
#pragma once

#include <filesystem>
#include <optional>
#include <string>

#include "config/run_config.h"
#include "engine/run_engine.h"
#include "outputs/node_csv_writer.h"
#include "outputs/port_csv_writer.h"
#include "outputs/results_files.h"
#include "outputs/telemetry/run_telemetry.h"
#include "runner/split_run_results.h"

namespace etwire::runner {

class RunOutputs {
 public:
  // Telemetry when metrics are served or pushed (`enabled`), on the engine's labels and ring.
  // Throws telemetry::EndpointError when the endpoint cannot bind.
  void open_telemetry(engine::RunEngine& engine, const config::MetricsEndpoint& metrics);
  // The files of `record` in `out`, handed to the engine: only process 0 (`writes_results`)
  // writes them; a split run keeps its flow records for the gather. Elsewhere in a run whose
  // engines are alike (a fabric twin spread over processes) the engine samples as process 0's
  // does, into nothing: its samples settle the counters of all processes together.
  void open_files(engine::RunEngine& engine, const config::RecordConfig& record,
                  const std::filesystem::path& out, bool writes_results, bool split);

  const telemetry::RunTelemetry* telemetry() const { return telemetry_ ? &*telemetry_ : nullptr; }
  // This process's flow records, when the run is split (nullptr otherwise).
  const FlowRecordBuffer* split_flows() const { return split_flows_ ? &*split_flows_ : nullptr; }
  // flows.csv anew with every process's records (process 0, after the gather).
  void rewrite_flows(const std::vector<transport::FlowRecord>& records);
  // The telemetry's last values pushed; returns a warning to print, or "".
  std::string finish_telemetry();
  // Closes the files; false (after saying why) when one could not be written.
  bool close_files();
  // Keeps the metrics endpoint up for its linger after the run, so Prometheus scrapes the final
  // values; a stop request (Ctrl-C) ends it early.
  void linger() const;

 private:
  std::optional<telemetry::RunTelemetry> telemetry_;
  std::string flows_path_;
  std::optional<outputs::FlowCsvWriter> flows_;
  std::optional<FlowRecordBuffer> split_flows_;
  std::optional<outputs::QueueCsvWriter> queues_;
  std::optional<outputs::PortCsvWriter> ports_;
  std::optional<outputs::NodeCsvWriter> nodes_;
  struct NoPortSeries final : engine::PortSeriesSink {
    void append(const engine::PortSeriesRow&) override {}
  } no_port_series_;
};

}  // namespace etwire::runner

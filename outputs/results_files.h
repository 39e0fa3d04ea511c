// The files a run leaves in its results directory:
//   summary.json     the whole RunResults: run, jobs, collective instances, iterations, ports, FCT
//   collectives.csv  one row per collective instance, the fields of summary.json's collectives[]
//   flows.csv        one row per flow, streamed while the run goes (FlowCsvWriter)
//   queues.csv       the twin's switch egress queues, sampled while the run goes (QueueCsvWriter)
// Bandwidths are in GB/s of 1e9 bytes per second, as nccl-tests prints them, so figures compare
// directly. Every writer throws std::runtime_error("<path>: <reason>") when the file cannot be
// written; output_file.h says how each reaches the disk (summary.json and collectives.csv whole,
// or not at all; flows.csv and queues.csv in whole lines).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "dataplane/queue_row.h"
#include "engine/flow_sink.h"
#include "engine/run_results.h"
#include "outputs/output_file.h"
#include "transport/flow_record.h"

namespace etwire::outputs {

// The collective as the result files and the console name it: "all_reduce", "all_to_all", ...,
// "send_recv" for point-to-point.
std::string collective_type_label(collectives::CollectiveKind kind);
// The inverse of collective_type_label; nullopt when no kind has that label.
std::optional<collectives::CollectiveKind> collective_kind_labelled(std::string_view label);
// A group key as the result files print it: "all" (-1), "p2p" (kPointToPointGroup), else the
// comm-group id.
std::string group_label(int64_t group);
// The job's name from results.jobs, or its index when the job is not listed.
std::string job_label(const engine::RunResults& results, uint32_t job);

// Appends `text` as one CSV field (RFC 4180: a field holding a comma, quote or line break is
// quoted, quotes doubled).
void append_csv_text(std::string_view text, std::string& out);

void write_summary_json(const engine::RunResults& results, const std::string& path);
void write_collectives_csv(const engine::RunResults& results, const std::string& path);

// flows.csv: the header, then one line per appended record; it runs for every flow of the run.
class FlowCsvWriter final : public engine::FlowSink {
 public:
  explicit FlowCsvWriter(std::string path);

  void append(const transport::FlowRecord& record) override;
  void flush() override { file_.flush(); }
  // Flushes and closes the file; append() after close() throws.
  void close() { file_.close(); }

  const std::string& path() const { return file_.path(); }
  uint64_t records() const { return records_; }

 private:
  StreamedFile file_;
  uint64_t records_ = 0;
};

// queues.csv: the header, then one line per queue sample: time_ns, switch_port (its name),
// priority, depth_bytes, depth_packets, max_depth_bytes, ecn_marked, drops, trimmed, paused,
// utilization.
class QueueCsvWriter final : public dataplane::QueueSink {
 public:
  explicit QueueCsvWriter(std::string path);

  void append(const dataplane::QueueRow& row, std::string_view switch_port) override;
  void close() { file_.close(); }
  const std::string& path() const { return file_.path(); }
  uint64_t rows() const { return rows_; }

 private:
  StreamedFile file_;
  uint64_t rows_ = 0;
};

}  // namespace etwire::outputs

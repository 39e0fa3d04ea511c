// The files a run leaves in its results directory:
//   summary.json     the whole RunResults: run, jobs, collective instances, iterations, ports, FCT
//   collectives.csv  one row per collective instance, the fields of summary.json's collectives[]
//   flows.csv        one row per flow, streamed while the run goes (FlowCsvWriter)
// Bandwidths are in GB/s of 1e9 bytes per second, as nccl-tests prints them, so figures compare
// directly. Every writer throws std::runtime_error("<path>: <reason>") when the file cannot be
// written.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "engine/flow_sink.h"
#include "engine/run_results.h"
#include "transport/flow_record.h"

namespace etwire::outputs {

// The collective as the result files and the console name it: "all_reduce", "all_to_all", ...,
// "send_recv" for point-to-point.
std::string collective_type_label(collectives::CollectiveKind kind);
// A group key as the result files print it: "all" (-1), "p2p" (kPointToPointGroup), else the
// comm-group id.
std::string group_label(int64_t group);
// The job's name from results.jobs, or its index when the job is not listed.
std::string job_label(const engine::RunResults& results, uint32_t job);

void write_summary_json(const engine::RunResults& results, const std::string& path);
void write_collectives_csv(const engine::RunResults& results, const std::string& path);

// flows.csv: the header, then one line per appended record. Lines collect in a buffer written out
// about every MiB, so appending costs no system call and, once the buffer has its full size, no
// allocation: it runs for every flow of the run.
class FlowCsvWriter final : public engine::FlowSink {
 public:
  // Creates (truncates) `path`.
  explicit FlowCsvWriter(std::string path);
  // Flushes; errors are swallowed here since a destructor must not throw: call close() to see
  // them.
  ~FlowCsvWriter();
  FlowCsvWriter(const FlowCsvWriter&) = delete;
  FlowCsvWriter& operator=(const FlowCsvWriter&) = delete;

  void append(const transport::FlowRecord& record) override;
  // Writes every buffered line to the file.
  void flush() override;
  // Flushes and closes the file; append() after close() throws.
  void close();

  const std::string& path() const { return path_; }
  uint64_t records() const { return records_; }

 private:
  [[noreturn]] void fail(std::string_view why) const;

  std::string path_;
  int fd_ = -1;
  std::string buffer_;
  uint64_t records_ = 0;
};

}  // namespace etwire::outputs

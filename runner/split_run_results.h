// The results of a run split between emulator processes, gathered to process 0: each process's
// part of the results and the flow records its requesters finished, put on process 0's time base
// with the clock offsets measured before the run. Over MPI, after the last packet.
#pragma once

#include <filesystem>
#include <functional>
#include <optional>
#include <vector>

#include "cluster/clock_offset.h"
#include "cluster/session.h"
#include "engine/flow_sink.h"
#include "engine/run_engine.h"

namespace etwire::runner {

// Keeps a process's flow records until they are gathered, passing each on to `also` (process 0's
// flows.csv, written as flows finish) when given.
class FlowRecordBuffer final : public engine::FlowSink {
 public:
  explicit FlowRecordBuffer(engine::FlowSink* also = nullptr) : also_(also) {}
  void append(const transport::FlowRecord& record) override {
    records_.push_back(record);
    if (also_ != nullptr) also_->append(record);
  }
  void flush() override {
    if (also_ != nullptr) also_->flush();
  }
  const std::vector<transport::FlowRecord>& records() const { return records_; }

 private:
  engine::FlowSink* also_;
  std::vector<transport::FlowRecord> records_;
};

struct SplitRunResults {
  engine::RunResults results;
  // Every process's flow records, process 0's first, on process 0's time base; flow ids numbered
  // across the run (each process's after the previous ones') and collective instances by their
  // numbers in `results`.
  std::vector<transport::FlowRecord> flows;
};

// A split run the launcher is ending (a signal; another process died): this process's own part,
// kept where it can be found. Process 0 writes it as the run's results through `report` (its
// flows.csv was written as flows finished); another process writes summary.json and flows.csv in
// `out`/emulator-NAME. The summary says whose part it is. Returns the exit code.
int keep_own_part(const cluster::Session& session, const config::RunConfig& config,
                  const engine::RunEngine& engine, const std::filesystem::path& out,
                  const FlowRecordBuffer* flows,
                  const std::function<int(const engine::RunResults&)>& report);

// Collective: every process calls it after its engine ran. `offsets` are process 0's measurement
// (join_emulator_processes). On process 0 returns the merged results; elsewhere nothing. Throws
// std::runtime_error on process 0 when a part cannot be read.
std::optional<SplitRunResults> gather_split_results(
    const cluster::Session& session, const engine::RunEngine& engine,
    const std::vector<cluster::ClockOffset>& offsets, const FlowRecordBuffer& mine);

}  // namespace etwire::runner

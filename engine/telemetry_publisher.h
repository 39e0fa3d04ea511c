// The run's telemetry records: a fixed-size record per finished flow, collective instance and
// iteration, and the running totals of the run, its jobs and its ports every telemetry period of
// wall time (and once at the end). Pushing copies a few words into the ring and never waits; a
// full ring drops the record and counts it. Without a ring every call does nothing.
#pragma once

#include <chrono>
#include <vector>

#include "clock/scheduler.h"
#include "config/run_config.h"
#include "control/plan/run_plan.h"
#include "dataplane/data_plane.h"
#include "engine/rank_runtime.h"
#include "engine/replayed_job.h"
#include "engine/run_results.h"
#include "engine/telemetry/record_ring.h"
#include "transport/flow_record.h"

namespace etwire::engine {

class TelemetryPublisher {
 public:
  // `jobs` and `runtimes` are the engine's, read for the jobs' progress; every argument but
  // `ring` must outlive this.
  TelemetryPublisher(const control::RunPlan& plan, dataplane::DataPlane& data_plane,
                     const std::vector<ReplayedJob>& jobs, const std::vector<RankRuntime>& runtimes,
                     telemetry::RecordRing* ring, std::chrono::milliseconds period);

  // Where records go from now on; nullptr stops them.
  void set_ring(telemetry::RecordRing* ring) { ring_ = ring; }

  void flow(const CollectiveRecord& owner, const transport::FlowRecord& flow);
  // Measured instances only.
  void collective(const CollectiveRecord& record);
  void iteration(const IterationRecord& record);
  // The running totals now; `finished`: the run has its final `status`.
  void snapshot(bool finished, RunStatus status);
  // The running totals when a period has passed since the last ones (or since `now` was given to
  // start()).
  void start(std::chrono::steady_clock::time_point now) { last_snapshot_ = now; }
  void snapshot_when_due(std::chrono::steady_clock::time_point now, RunStatus status);

 private:
  // telemetry.metrics.per_qp: a record per QP half of the data plane.
  void publish_qps(telemetry::RecordRing& ring);

  const control::RunPlan& plan_;  // its QP numbers
  const config::RunConfig& config_;
  dataplane::DataPlane& data_plane_;
  clock::Scheduler& clock_;
  const std::vector<ReplayedJob>& jobs_;
  const std::vector<RankRuntime>& runtimes_;
  telemetry::RecordRing* ring_;
  std::chrono::milliseconds period_;
  std::chrono::steady_clock::time_point last_snapshot_;
  std::vector<transport::QpStats> qp_snapshot_;  // reused by every per-QP snapshot
  std::vector<double> paced_rates_;              // per port, reused by every snapshot
};

}  // namespace etwire::engine

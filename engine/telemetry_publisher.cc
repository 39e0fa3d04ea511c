#include "engine/telemetry_publisher.h"

namespace etwire::engine {

namespace {

uint8_t kind_index(const collectives::CollectiveKind& kind) {
  return kind ? static_cast<uint8_t>(*kind) : telemetry::kSendRecvKind;
}

telemetry::RunState run_state(RunStatus status) {
  switch (status) {
    case RunStatus::kCompleted:
      return telemetry::RunState::kCompleted;
    case RunStatus::kFlowsFailed:
      return telemetry::RunState::kFlowsFailed;
    case RunStatus::kStuck:
      return telemetry::RunState::kStuck;
    case RunStatus::kInterrupted:
      return telemetry::RunState::kInterrupted;
    case RunStatus::kFailed:
      return telemetry::RunState::kFailed;
  }
  return telemetry::RunState::kFailed;
}

}  // namespace

TelemetryPublisher::TelemetryPublisher(const control::RunPlan& plan,
                                       dataplane::DataPlane& data_plane,
                                       const std::vector<ReplayedJob>& jobs,
                                       const std::vector<RankRuntime>& runtimes,
                                       telemetry::RecordRing* ring,
                                       std::chrono::milliseconds period)
    : plan_(plan),
      config_(plan.config),
      data_plane_(data_plane),
      clock_(data_plane.scheduler()),
      jobs_(jobs),
      runtimes_(runtimes),
      ring_(ring),
      period_(period) {}

void TelemetryPublisher::flow(const CollectiveRecord& owner, const transport::FlowRecord& flow) {
  if (!ring_) return;
  ring_->push(telemetry::Record::of(telemetry::FlowSample{
      owner.job, kind_index(owner.kind), static_cast<uint8_t>(owner.algorithm),
      flow.status != transport::FlowStatus::kCompleted, flow.fct()}));
}

void TelemetryPublisher::collective(const CollectiveRecord& record) {
  if (!ring_ || record.warmup) return;
  ring_->push(telemetry::Record::of(telemetry::CollectiveSample{
      record.job, kind_index(record.kind), static_cast<uint8_t>(record.algorithm), record.cct(),
      record.algbw_bytes_per_second(), record.busbw_bytes_per_second()}));
}

void TelemetryPublisher::iteration(const IterationRecord& record) {
  if (!ring_) return;
  ring_->push(telemetry::Record::of(telemetry::IterationSample{
      record.job, record.iteration, record.warmup, record.jct(), record.max_exposed_comm()}));
}

void TelemetryPublisher::publish_qps(telemetry::RecordRing& ring) {
  // On the wall clock the QPs can be read only once the workers stopped: their series appear at
  // the end of the run (kept by metrics.linger and the push).
  qp_snapshot_.clear();
  if (!data_plane_.append_qp_stats(qp_snapshot_)) return;
  for (const transport::QpStats& qp : qp_snapshot_) {
    // Labelled by port and wire number, as records show them.
    telemetry::QpSample sample{
        qp.port,      qp.remote_port, plan_.wire_qpn(qp.port, qp.qpn), qp.role, {},
        qp.rate_cuts, qp.rate_bps / 8};
    for (size_t c = 0; c < sample.counters.size(); ++c) {
      sample.counters[c] = qp.counters.*transport::kQpCounterFields[c].member;
    }
    ring.push(telemetry::Record::of(sample));
  }
}

void TelemetryPublisher::snapshot(bool finished, RunStatus status) {
  telemetry::RecordRing* ring = ring_;
  if (!ring) return;
  for (size_t j = 0; j < jobs_.size(); ++j) {
    const ReplayedJob& job = jobs_[j];
    uint64_t nodes = job.nodes_completed_before;
    for (int32_t rank = 0; rank < job.world_size; ++rank) {
      const RankRuntime& rt = runtimes_[job.first_runtime + static_cast<uint32_t>(rank)];
      // A finished rank's last iteration is already in nodes_completed_before.
      if (rt.finished() || !rt.has_feeder()) continue;
      const feeder::FeederStats& stats = rt.feeder().stats();
      nodes += stats.nodes_completed + stats.nodes_filtered;
    }
    ring->push(telemetry::Record::of(
        telemetry::JobProgress{static_cast<uint32_t>(j), job.iterations_completed, nodes}));
  }
  data_plane_.paced_rates_bps(paced_rates_);
  for (size_t p = 0; p < data_plane_.ports(); ++p) {
    const PortRecord port = data_plane_.port_record(p);
    telemetry::PortSample sample{static_cast<uint32_t>(p), {}, paced_rates_[p] / 8};
    for (size_t c = 0; c < sample.counters.size(); ++c) {
      sample.counters[c] = port.*dataplane::kPortCounterFields[c].member;
    }
    ring->push(telemetry::Record::of(sample));
  }
  if (config_.telemetry.metrics.per_qp) publish_qps(*ring);
  ring->push(telemetry::Record::of(telemetry::RunSample{
      finished ? run_state(status) : telemetry::RunState::kRunning, clock_.now()}));
}

void TelemetryPublisher::snapshot_when_due(std::chrono::steady_clock::time_point now,
                                           RunStatus status) {
  if (ring_ && now - last_snapshot_ >= period_) {
    last_snapshot_ = now;
    snapshot(false, status);
  }
}

}  // namespace etwire::engine

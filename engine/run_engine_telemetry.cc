// The run engine's telemetry records: a fixed-size record per finished flow, collective instance
// and iteration, and the running totals every so often. Pushing copies a few words into the ring
// and never waits; a full ring drops the record and counts it.
#include "engine/run_engine.h"

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

void RunEngine::sample_queues() {
  const clock::Nanos interval = config_.telemetry.record.queue_sample_interval_ns;
  if (interval <= 0) return;
  queue_samples_.set_telemetry(options_.telemetry);
  data_plane_->sample_queues(queue_samples_, interval);
}

void RunEngine::set_port_writer(PortSeriesSink* ports) {
  // Unset: a few hundred samples on a typical run of either clock. A lab run lasts seconds to
  // minutes, and a sample of an RNIC's port reads its counters from sysfs (tens of microseconds
  // per port), so the wall clock samples far less often than the twin's virtual time.
  constexpr clock::Nanos kVirtualTimeDefault = 20'000;
  constexpr clock::Nanos kWallClockDefault = 10'000'000;
  const auto& configured = config_.telemetry.record.port_sample_interval_ns;
  const clock::Nanos interval =
      configured ? static_cast<clock::Nanos>(*configured)
                 : (data_plane_->virtual_time() ? kVirtualTimeDefault : kWallClockDefault);
  port_sampler_.reset();
  if (ports != nullptr && interval > 0) {
    port_sampler_ = std::make_unique<PortSampler>(*data_plane_, interval, *ports);
  }
}

telemetry::MetricLabels RunEngine::metric_labels() const {
  telemetry::MetricLabels labels;
  labels.run = results_.run_name;
  labels.topology = results_.topology;
  labels.config_digest = results_.config_digest;
  // The emulator host each series comes from (empty: this machine's name, as telemetry fills it).
  if (options_.session != nullptr) labels.host = options_.session->host();
  for (size_t j = 0; j < jobs_.size(); ++j) {
    const config::JobConfig& job = *jobs_[j].config;
    const uint32_t iterations = job.warmup_iterations + job.iterations;
    const auto& facts = loaded_.traces.at(j);
    labels.jobs.push_back({job.name, iterations, facts ? facts->nodes * iterations : 0});
  }
  for (size_t p = 0; p < data_plane_->ports(); ++p) {
    PortRecord port = data_plane_->port_record(p);
    labels.ports.push_back({std::move(port.name), port.speed_bps, port.absent});
  }
  if (config_.telemetry.record.queue_sample_interval_ns > 0)
    labels.switch_ports = data_plane_->switch_port_names();
  labels.per_qp = config_.telemetry.metrics.per_qp;
  return labels;
}

void RunEngine::publish_flow(const CollectiveRecord& owner, const transport::FlowRecord& flow) {
  if (!options_.telemetry) return;
  options_.telemetry->push(telemetry::Record::of(telemetry::FlowSample{
      owner.job, kind_index(owner.kind), static_cast<uint8_t>(owner.algorithm),
      flow.status != transport::FlowStatus::kCompleted, flow.fct()}));
}

void RunEngine::publish_collective(const CollectiveRecord& record) {
  if (!options_.telemetry || record.warmup) return;
  options_.telemetry->push(telemetry::Record::of(telemetry::CollectiveSample{
      record.job, kind_index(record.kind), static_cast<uint8_t>(record.algorithm), record.cct(),
      record.algbw_bytes_per_second(), record.busbw_bytes_per_second()}));
}

void RunEngine::publish_iteration(const IterationRecord& record) {
  if (!options_.telemetry) return;
  options_.telemetry->push(telemetry::Record::of(telemetry::IterationSample{
      record.job, record.iteration, record.warmup, record.jct(), record.max_exposed_comm()}));
}

void RunEngine::publish_qps(telemetry::RecordRing& ring) {
  // On the wall clock the QPs can be read only once the workers stopped: their series appear at
  // the end of the run (kept by metrics.linger and the push).
  qp_snapshot_.clear();
  if (!data_plane_->append_qp_stats(qp_snapshot_)) return;
  for (const transport::QpStats& qp : qp_snapshot_) {
    telemetry::QpSample sample{qp.port, qp.remote_port, qp.qpn,         qp.role,
                               {},      qp.rate_cuts,   qp.rate_bps / 8};
    for (size_t c = 0; c < sample.counters.size(); ++c) {
      sample.counters[c] = qp.counters.*transport::kQpCounterFields[c].member;
    }
    ring.push(telemetry::Record::of(sample));
  }
}

void RunEngine::publish_snapshot(bool finished) {
  telemetry::RecordRing* ring = options_.telemetry;
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
  data_plane_->paced_rates_bps(paced_rates_);
  for (size_t p = 0; p < data_plane_->ports(); ++p) {
    const PortRecord port = data_plane_->port_record(p);
    telemetry::PortSample sample{static_cast<uint32_t>(p), {}, paced_rates_[p] / 8};
    for (size_t c = 0; c < sample.counters.size(); ++c) {
      sample.counters[c] = port.*dataplane::kPortCounterFields[c].member;
    }
    ring->push(telemetry::Record::of(sample));
  }
  if (config_.telemetry.metrics.per_qp) publish_qps(*ring);
  ring->push(telemetry::Record::of(telemetry::RunSample{
      finished ? run_state(results_.status) : telemetry::RunState::kRunning, clock_.now()}));
}

}  // namespace etwire::engine

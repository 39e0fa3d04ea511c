// The run engine's samplers (the twin's queues, the ports' counters) and the labels of its
// telemetry records; the records themselves are TelemetryPublisher's.
#include "engine/run_engine.h"

namespace etwire::engine {

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

}  // namespace etwire::engine

#include "outputs/telemetry/run_telemetry.h"

#include "outputs/telemetry/pushgateway.h"

namespace etwire::telemetry {

RunTelemetry::RunTelemetry(MetricLabels labels, const config::MetricsEndpoint& endpoint,
                           size_t ring_capacity)
    : config_(endpoint), metrics_(std::move(labels)), aggregator_(metrics_) {
  if (config_.enabled) server_.emplace(config_.address, config_.port, metrics_.registry());
  ring_ = &aggregator_.add_ring(ring_capacity);
  aggregator_.start();
}

RunTelemetry::~RunTelemetry() {
  aggregator_.finish();
}

void RunTelemetry::finish() {
  aggregator_.finish();
}

std::string RunTelemetry::push(const std::atomic<bool>* stop) const {
  if (config_.pushgateway.empty()) return "";
  return push_to_gateway(config_.pushgateway, metrics_.labels().run, metrics_.labels().host,
                         metrics_.registry(), stop);
}

}  // namespace etwire::telemetry

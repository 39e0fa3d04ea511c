// A run's telemetry in one place: its metrics, the /metrics endpoint (unless turned off), the
// aggregator thread that feeds the metrics from the workers' rings, and the final push to a
// Pushgateway. The data plane sees only its RecordRing.
#pragma once

#include <atomic>
#include <chrono>
#include <memory>
#include <optional>
#include <string>

#include "config/telemetry_config.h"
#include "engine/telemetry/metric_labels.h"
#include "engine/telemetry/record_ring.h"
#include "outputs/telemetry/metrics_server.h"
#include "outputs/telemetry/record_aggregator.h"
#include "outputs/telemetry/run_metrics.h"

namespace etwire::telemetry {

// Records a ring holds: at 128 bytes each, 8 MiB, enough for the flows of several hundred
// milliseconds at the loopback data plane's fastest between two drains.
inline constexpr size_t kDefaultRingCapacity = size_t{1} << 16;

class RunTelemetry {
 public:
  // Serves the metrics when `endpoint.enabled` (throws EndpointError when the address cannot be
  // bound); the aggregator starts at once. An empty `labels.host` becomes this machine's host
  // name, so every series has a host.
  RunTelemetry(MetricLabels labels, const config::MetricsEndpoint& endpoint,
               size_t ring_capacity = kDefaultRingCapacity);
  ~RunTelemetry();

  // The data-plane worker's ring (a loopback run has one worker).
  RecordRing& ring() { return *ring_; }
  // Applies every record pushed so far and stops aggregating: the metrics are final.
  void finish();
  // Pushes the metrics to the configured Pushgateway; "" when done or none is configured, else
  // the error. Given up after telemetry::kPushTimeout, or at once when `stop` is set.
  std::string push(const std::atomic<bool>* stop = nullptr) const;

  const RunMetrics& metrics() const { return metrics_; }
  // nullptr when metrics are not served.
  const MetricsServer* server() const { return server_ ? &*server_ : nullptr; }
  std::chrono::nanoseconds linger() const { return std::chrono::nanoseconds(config_.linger_ns); }

 private:
  config::MetricsEndpoint config_;
  RunMetrics metrics_;
  std::optional<MetricsServer> server_;
  RecordAggregator aggregator_;
  RecordRing* ring_ = nullptr;
};

}  // namespace etwire::telemetry

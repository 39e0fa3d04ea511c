// The Prometheus metrics of one run, kept in a prometheus-cpp registry and updated from telemetry
// records. Only the aggregator thread applies records; scrapes read the registry concurrently
// (prometheus-cpp's metrics are safe for that). Names follow Prometheus conventions: snake_case,
// base units (seconds, bytes), `_total` for counters. docs/monitoring.md lists every metric.
#pragma once

#include <prometheus/counter.h>
#include <prometheus/family.h>
#include <prometheus/gauge.h>
#include <prometheus/histogram.h>
#include <prometheus/registry.h>

#include <array>
#include <map>
#include <memory>
#include <string>
#include <tuple>
#include <vector>

#include "engine/telemetry/metric_labels.h"
#include "engine/telemetry/telemetry_record.h"

namespace etwire::telemetry {

// Histogram bucket bounds in seconds: 1, 2 and 5 of every decade from 1 us to 10 s.
const std::vector<double>& latency_buckets();

// The `collective` label: "all_reduce", ..., "send_recv".
std::string collective_label(uint8_t kind);
// The `state` label: "running", "completed", "flows-failed", "stuck", "interrupted", "failed".
std::string run_state_label(RunState state);

// This machine's host name (gethostname), or "unknown" when it has none: the `host` label of a
// run whose labels name no host.
std::string local_host_name();

class RunMetrics {
 public:
  // Every series carries `run` and `host`; an empty `labels.host` becomes local_host_name().
  explicit RunMetrics(MetricLabels labels);
  RunMetrics(const RunMetrics&) = delete;
  RunMetrics& operator=(const RunMetrics&) = delete;

  void apply(const Record& record);
  // Records lost so far because a worker's ring was full (a running total).
  void set_records_dropped(uint64_t total);

  std::shared_ptr<prometheus::Registry> registry() const { return registry_; }
  // As given, with the host filled in.
  const MetricLabels& labels() const { return labels_; }
  // The whole registry in the text exposition format, as /metrics serves it.
  std::string text() const;

 private:
  // The series of one (job, collective type, algorithm), created when first needed.
  struct CollectiveSeries {
    prometheus::Histogram* fct = nullptr;
    prometheus::Counter* failed_flows = nullptr;
    prometheus::Histogram* cct = nullptr;
    prometheus::Gauge* busbw = nullptr;
    prometheus::Gauge* algbw = nullptr;
  };
  struct JobSeries {
    prometheus::Counter* iterations_completed = nullptr;
    prometheus::Counter* nodes_completed = nullptr;
    prometheus::Gauge* jct = nullptr;
    prometheus::Gauge* exposed_comm = nullptr;
    JobProgress last{};
  };
  // A switch egress queue's depth and its link's utilization, made when first sampled.
  struct QueueSeries {
    prometheus::Gauge* depth = nullptr;
  };
  struct PortSeries {
    std::array<prometheus::Counter*, dataplane::kPortCounterFields.size()>
        counters{};  // table order
    prometheus::Gauge* paced_rate = nullptr;
    PortSample last{};
  };

  // A QP half's series (telemetry.metrics.per_qp), made when its first record arrives: its
  // role's counters (nullptr for the other role's), and for a requester its rate cuts and rate.
  struct QpSeries {
    std::array<prometheus::Counter*, transport::kQpCounterFields.size()> counters{};
    prometheus::Counter* rate_cuts = nullptr;
    prometheus::Gauge* rate = nullptr;
    QpSample last{};
  };

  // nullptr for indexes outside the run's labels.
  CollectiveSeries* series(uint32_t job, uint8_t kind, uint8_t algorithm);
  void apply_flow(const FlowSample& sample);
  void apply_collective(const CollectiveSample& sample);
  void apply_iteration(const IterationSample& sample);
  void apply_job(const JobProgress& progress);
  void apply_port(const PortSample& sample);
  void apply_run(const RunSample& sample);
  void apply_queue(const QueueDepthSample& sample);
  void apply_qp(const QpSample& sample);
  QpSeries& qp_series(const QpSample& sample);

  MetricLabels labels_;
  std::shared_ptr<prometheus::Registry> registry_;

  prometheus::Family<prometheus::Histogram>& fct_family_;
  prometheus::Family<prometheus::Counter>& failed_flows_family_;
  prometheus::Family<prometheus::Histogram>& cct_family_;
  prometheus::Family<prometheus::Gauge>& busbw_family_;
  prometheus::Family<prometheus::Gauge>& algbw_family_;

  std::array<prometheus::Gauge*, kRunStateCount> state_{};
  prometheus::Gauge* virtual_time_ = nullptr;
  prometheus::Counter* records_dropped_ = nullptr;
  uint64_t records_dropped_seen_ = 0;
  std::vector<JobSeries> jobs_;
  std::vector<PortSeries> ports_;
  std::vector<CollectiveSeries> collectives_;  // by (job, kind, algorithm)
  prometheus::Family<prometheus::Gauge>& queue_depth_family_;
  prometheus::Family<prometheus::Gauge>& link_utilization_family_;
  std::vector<QueueSeries> queues_;                   // by switch port x 8 + priority
  std::vector<prometheus::Gauge*> link_utilization_;  // by switch port
  // Per-QP families, only with labels_.per_qp (table order), and the series by (role, port, QP).
  std::vector<prometheus::Family<prometheus::Counter>*> qp_counter_families_;
  prometheus::Family<prometheus::Counter>* qp_rate_cuts_family_ = nullptr;
  prometheus::Family<prometheus::Gauge>* qp_rate_family_ = nullptr;
  std::map<std::tuple<transport::QpRole, uint32_t, uint32_t>, QpSeries> qps_;
};

}  // namespace etwire::telemetry

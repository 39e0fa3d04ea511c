#include "outputs/telemetry/run_metrics.h"

#include <prometheus/text_serializer.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <climits>
#include <sstream>

#include "collectives/algorithm.h"
#include "trace/node.h"

namespace etwire::telemetry {

namespace {

using prometheus::BuildCounter;
using prometheus::BuildGauge;
using prometheus::BuildHistogram;

constexpr double kNsPerSecond = 1e9;
constexpr uint32_t kPriorities = 8;  // 802.1p classes: a switch port's egress queues

// Every family carries the run and the host as constant labels: the host keeps apart the series
// of the processes of a run split between hosts, which are otherwise alike.
template <typename Builder>
auto& family(Builder builder, prometheus::Registry& registry, const MetricLabels& labels,
             const std::string& name, const std::string& help) {
  return builder.Name(name)
      .Help(help)
      .Labels({{"run", labels.run}, {"host", labels.host}})
      .Register(registry);
}

MetricLabels with_host(MetricLabels labels) {
  if (labels.host.empty()) labels.host = local_host_name();
  return labels;
}

// Adds what a running total grew by since it was last seen (totals never shrink).
void add_growth(prometheus::Counter& counter, uint64_t total, uint64_t seen) {
  if (total > seen) counter.Increment(static_cast<double>(total - seen));
}

}  // namespace

const std::vector<double>& latency_buckets() {
  // Written out rather than computed: products like 5 * 1e-6 are not the literal 5e-6, and the
  // bounds become the `le` labels dashboards show.
  static const std::vector<double> buckets{1e-6, 2e-6, 5e-6, 1e-5, 2e-5, 5e-5, 1e-4, 2e-4,
                                           5e-4, 1e-3, 2e-3, 5e-3, 1e-2, 2e-2, 5e-2, 0.1,
                                           0.2,  0.5,  1.0,  2.0,  5.0,  10.0};
  return buckets;
}

std::string collective_label(uint8_t kind) {
  if (kind >= kSendRecvKind) return "send_recv";
  std::string name(trace::collective_type_name(static_cast<trace::CollectiveType>(kind)));
  std::transform(name.begin(), name.end(), name.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return name;
}

std::string local_host_name() {
  std::array<char, HOST_NAME_MAX + 1> name{};
  // A name that fills the buffer may come back unterminated: the last byte stays 0.
  if (gethostname(name.data(), name.size() - 1) != 0 || name[0] == '\0') return "unknown";
  return name.data();
}

std::string run_state_label(RunState state) {
  switch (state) {
    case RunState::kRunning:
      return "running";
    case RunState::kCompleted:
      return "completed";
    case RunState::kFlowsFailed:
      return "flows-failed";
    case RunState::kStuck:
      return "stuck";
    case RunState::kInterrupted:
      return "interrupted";
    case RunState::kFailed:
      return "failed";
  }
  return "unknown";
}

RunMetrics::RunMetrics(MetricLabels labels)
    : labels_(with_host(std::move(labels))),
      registry_(std::make_shared<prometheus::Registry>()),
      fct_family_(family(BuildHistogram(), *registry_, labels_, "etwire_flow_completion_seconds",
                         "Flow completion times of measured iterations: from posting a message "
                         "to its last acknowledgement.")),
      failed_flows_family_(
          family(BuildCounter(), *registry_, labels_, "etwire_flows_failed_total",
                 "Flows of measured iterations that exhausted their retries or were flushed.")),
      cct_family_(family(BuildHistogram(), *registry_, labels_,
                         "etwire_collective_completion_seconds",
                         "Collective completion times of measured iterations: from the last "
                         "member's arrival to the last member's completion.")),
      busbw_family_(family(BuildGauge(), *registry_, labels_,
                           "etwire_collective_busbw_bytes_per_second",
                           "Bus bandwidth of the last completed collective instance.")),
      algbw_family_(family(BuildGauge(), *registry_, labels_,
                           "etwire_collective_algbw_bytes_per_second",
                           "Algorithm bandwidth of the last completed collective instance.")),
      queue_depth_family_(family(BuildGauge(), *registry_, labels_, "etwire_twin_queue_depth_bytes",
                                 "Bytes waiting in a fabric twin switch egress queue at the last "
                                 "sample (telemetry.record.queue_sample_interval).")),
      link_utilization_family_(
          family(BuildGauge(), *registry_, labels_, "etwire_twin_link_utilization",
                 "Wire bytes a fabric twin switch port started over the last sample interval, "
                 "over what its link carries in that time.")),
      queues_(labels_.switch_ports.size() * kPriorities),
      link_utilization_(labels_.switch_ports.size(), nullptr) {
  prometheus::Registry& registry = *registry_;
  const MetricLabels& names = labels_;

  family(BuildGauge(), registry, names, "etwire_run_info",
         "Always 1; labels describe the run's configuration.")
      .Add({{"topology", labels_.topology}, {"config_digest", labels_.config_digest}})
      .Set(1);
  auto& state = family(BuildGauge(), registry, names, "etwire_run_state",
                       "1 for the run's current state, 0 for the others.");
  for (int s = 0; s < kRunStateCount; ++s) {
    state_[static_cast<size_t>(s)] =
        &state.Add({{"state", run_state_label(static_cast<RunState>(s))}});
  }
  state_[0]->Set(1);
  virtual_time_ = &family(BuildGauge(), registry, names, "etwire_run_virtual_time_seconds",
                          "The data plane's clock: virtual time on the fabric twin.")
                       .Add({});
  records_dropped_ =
      &family(BuildCounter(), registry, names, "etwire_telemetry_records_dropped_total",
              "Telemetry records lost because a worker's buffer was full.")
           .Add({});

  auto& iterations = family(BuildGauge(), registry, names, "etwire_job_iterations",
                            "Iterations the job replays: warm-up and measured.");
  auto& iterations_completed =
      family(BuildCounter(), registry, names, "etwire_job_iterations_completed_total",
             "Iterations every rank of the job finished, warm-up included.");
  auto& nodes = family(BuildGauge(), registry, names, "etwire_job_nodes",
                       "Trace nodes the job replays over the whole run, every rank and iteration.");
  auto& nodes_completed =
      family(BuildCounter(), registry, names, "etwire_job_nodes_completed_total",
             "Trace nodes of the job completed so far.");
  auto& jct = family(BuildGauge(), registry, names, "etwire_iteration_jct_seconds",
                     "Job completion time of the last measured iteration: the first rank's "
                     "start to the last rank's end.");
  auto& exposed =
      family(BuildGauge(), registry, names, "etwire_iteration_exposed_communication_seconds",
             "The largest per-rank exposed communication time (communication with no "
             "compute running) of the last measured iteration.");
  for (const JobLabel& job : labels_.jobs) {
    const prometheus::Labels by_job{{"job_name", job.name}};
    iterations.Add(by_job).Set(job.iterations);
    nodes.Add(by_job).Set(static_cast<double>(job.nodes));
    JobSeries series;
    series.iterations_completed = &iterations_completed.Add(by_job);
    series.nodes_completed = &nodes_completed.Add(by_job);
    series.jct = &jct.Add(by_job);
    series.exposed_comm = &exposed.Add(by_job);
    jobs_.push_back(series);
  }

  auto& speed = family(BuildGauge(), registry, names, "etwire_port_speed_bytes_per_second",
                       "The port's line rate.");
  auto& paced = family(BuildGauge(), registry, names, "etwire_port_paced_rate_bytes_per_second",
                       "Sum of the DCQCN rates of the port's queue pairs that have data to send, "
                       "at most the line rate.");
  std::vector<prometheus::Family<prometheus::Counter>*> counters;
  for (const dataplane::PortCounterField& field : dataplane::kPortCounterFields) {
    counters.push_back(&family(BuildCounter(), registry, names, std::string(field.metric),
                               std::string(field.help)));
  }
  for (const PortLabel& port : labels_.ports) {
    const prometheus::Labels by_port{{"port", port.name}};
    speed.Add(by_port).Set(static_cast<double>(port.speed_bps) / 8);
    PortSeries series;
    series.paced_rate = &paced.Add(by_port);
    // A counter the port's device does not count has no series: absent, not 0.
    for (size_t c = 0; c < counters.size(); ++c) {
      series.counters[c] = (port.absent & dataplane::port_counter_bit(c)) != 0
                               ? nullptr
                               : &counters[c]->Add(by_port);
    }
    ports_.push_back(series);
  }
  collectives_.resize(labels_.jobs.size() * kKindCount * collectives::kAlgorithmCount);

  if (labels_.per_qp) {
    for (const transport::QpCounterField& field : transport::kQpCounterFields) {
      qp_counter_families_.push_back(&family(BuildCounter(), registry, names,
                                             std::string(field.metric), std::string(field.help)));
    }
    qp_rate_cuts_family_ = &family(BuildCounter(), registry, names, "etwire_qp_rate_cuts_total",
                                   "DCQCN rate cuts of the requester QP.");
    qp_rate_family_ =
        &family(BuildGauge(), registry, names, "etwire_qp_dcqcn_rate_bytes_per_second",
                "The requester QP's DCQCN rate at the last snapshot.");
  }
}

void RunMetrics::apply(const Record& record) {
  switch (record.type) {
    case RecordType::kFlow:
      return apply_flow(record.flow);
    case RecordType::kCollective:
      return apply_collective(record.collective);
    case RecordType::kIteration:
      return apply_iteration(record.iteration);
    case RecordType::kJobProgress:
      return apply_job(record.job);
    case RecordType::kPort:
      return apply_port(record.port);
    case RecordType::kRun:
      return apply_run(record.run);
    case RecordType::kQueue:
      return apply_queue(record.queue);
    case RecordType::kQp:
      return apply_qp(record.qp);
  }
}

void RunMetrics::set_records_dropped(uint64_t total) {
  add_growth(*records_dropped_, total, records_dropped_seen_);
  records_dropped_seen_ = std::max(records_dropped_seen_, total);
}

std::string RunMetrics::text() const {
  std::ostringstream out;
  prometheus::TextSerializer().Serialize(out, registry_->Collect());
  return out.str();
}

RunMetrics::CollectiveSeries* RunMetrics::series(uint32_t job, uint8_t kind, uint8_t algorithm) {
  if (job >= jobs_.size() || kind >= kKindCount || algorithm >= collectives::kAlgorithmCount) {
    return nullptr;  // not a record of this run: nothing to label it with
  }
  return &collectives_[(job * kKindCount + kind) * collectives::kAlgorithmCount + algorithm];
}

namespace {

prometheus::Labels collective_labels(const MetricLabels& labels, uint32_t job, uint8_t kind,
                                     uint8_t algorithm) {
  return {
      {"job_name", labels.jobs[job].name},
      {"collective", collective_label(kind)},
      {"algorithm",
       std::string(collectives::algorithm_name(static_cast<collectives::Algorithm>(algorithm)))}};
}

}  // namespace

void RunMetrics::apply_flow(const FlowSample& sample) {
  CollectiveSeries* s = series(sample.job, sample.kind, sample.algorithm);
  if (s == nullptr) return;
  if (s->fct == nullptr) {
    const auto labels = collective_labels(labels_, sample.job, sample.kind, sample.algorithm);
    s->fct = &fct_family_.Add(labels, latency_buckets());
    s->failed_flows = &failed_flows_family_.Add(labels);
  }
  if (sample.failed) {
    s->failed_flows->Increment();
  } else {
    s->fct->Observe(static_cast<double>(sample.fct_ns) / kNsPerSecond);
  }
}

void RunMetrics::apply_collective(const CollectiveSample& sample) {
  CollectiveSeries* s = series(sample.job, sample.kind, sample.algorithm);
  if (s == nullptr) return;
  if (s->cct == nullptr) {
    const auto labels = collective_labels(labels_, sample.job, sample.kind, sample.algorithm);
    s->cct = &cct_family_.Add(labels, latency_buckets());
    s->busbw = &busbw_family_.Add(labels);
    s->algbw = &algbw_family_.Add(labels);
  }
  s->cct->Observe(static_cast<double>(sample.cct_ns) / kNsPerSecond);
  s->busbw->Set(sample.busbw_bytes_per_second);
  s->algbw->Set(sample.algbw_bytes_per_second);
}

void RunMetrics::apply_iteration(const IterationSample& sample) {
  if (sample.job >= jobs_.size() || sample.warmup) return;
  JobSeries& job = jobs_[sample.job];
  job.jct->Set(static_cast<double>(sample.jct_ns) / kNsPerSecond);
  job.exposed_comm->Set(static_cast<double>(sample.max_exposed_comm_ns) / kNsPerSecond);
}

void RunMetrics::apply_job(const JobProgress& progress) {
  if (progress.job >= jobs_.size()) return;
  JobSeries& job = jobs_[progress.job];
  add_growth(*job.iterations_completed, progress.iterations_completed,
             job.last.iterations_completed);
  add_growth(*job.nodes_completed, progress.nodes_completed, job.last.nodes_completed);
  job.last.iterations_completed =
      std::max(job.last.iterations_completed, progress.iterations_completed);
  job.last.nodes_completed = std::max(job.last.nodes_completed, progress.nodes_completed);
}

void RunMetrics::apply_port(const PortSample& sample) {
  if (sample.port >= ports_.size()) return;
  PortSeries& port = ports_[sample.port];
  for (size_t c = 0; c < sample.counters.size(); ++c) {
    if (port.counters[c] != nullptr) {
      add_growth(*port.counters[c], sample.counters[c], port.last.counters[c]);
    }
  }
  port.paced_rate->Set(sample.paced_rate_bytes_per_second);
  port.last = sample;
}

void RunMetrics::apply_queue(const QueueDepthSample& sample) {
  if (sample.switch_port >= labels_.switch_ports.size() || sample.priority >= kPriorities) return;
  const std::string& name = labels_.switch_ports[sample.switch_port];
  QueueSeries& queue = queues_[sample.switch_port * kPriorities + sample.priority];
  if (queue.depth == nullptr) {
    queue.depth = &queue_depth_family_.Add(
        {{"switch_port", name}, {"priority", std::to_string(sample.priority)}});
  }
  queue.depth->Set(static_cast<double>(sample.depth_bytes));
  prometheus::Gauge*& utilization = link_utilization_[sample.switch_port];
  if (utilization == nullptr) utilization = &link_utilization_family_.Add({{"switch_port", name}});
  utilization->Set(sample.utilization);
}

void RunMetrics::apply_run(const RunSample& sample) {
  for (int s = 0; s < kRunStateCount; ++s) {
    state_[static_cast<size_t>(s)]->Set(static_cast<int>(sample.state) == s ? 1 : 0);
  }
  virtual_time_->Set(static_cast<double>(sample.virtual_time_ns) / kNsPerSecond);
}

RunMetrics::QpSeries& RunMetrics::qp_series(const QpSample& sample) {
  auto [it, added] = qps_.try_emplace({sample.role, sample.port, sample.qpn});
  QpSeries& series = it->second;
  if (!added) return series;
  const auto port_name = [&](uint32_t port) {
    return port < labels_.ports.size() ? labels_.ports[port].name : std::to_string(port);
  };
  const prometheus::Labels by_qp{{"port", port_name(sample.port)},
                                 {"remote_port", port_name(sample.remote_port)},
                                 {"role", std::string(transport::qp_role_name(sample.role))},
                                 {"qpn", std::to_string(sample.qpn)}};
  for (size_t c = 0; c < transport::kQpCounterFields.size(); ++c) {
    // A counter the role does not keep has no series rather than a 0 forever.
    if ((transport::kQpCounterFields[c].roles & transport::role_bit(sample.role)) != 0) {
      series.counters[c] = &qp_counter_families_[c]->Add(by_qp);
    }
  }
  if (sample.role == transport::QpRole::kRequester) {
    series.rate_cuts = &qp_rate_cuts_family_->Add(by_qp);
    series.rate = &qp_rate_family_->Add(by_qp);
  }
  return series;
}

void RunMetrics::apply_qp(const QpSample& sample) {
  if (!labels_.per_qp) return;
  QpSeries& series = qp_series(sample);
  for (size_t c = 0; c < sample.counters.size(); ++c) {
    if (series.counters[c] != nullptr) {
      add_growth(*series.counters[c], sample.counters[c], series.last.counters[c]);
    }
  }
  if (series.rate_cuts != nullptr) {
    add_growth(*series.rate_cuts, sample.rate_cuts, series.last.rate_cuts);
    series.rate->Set(sample.rate_bytes_per_second);
  }
  series.last = sample;
}

}  // namespace etwire::telemetry

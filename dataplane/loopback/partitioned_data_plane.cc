#include "dataplane/loopback/partitioned_data_plane.h"

#include <algorithm>
#include <array>
#include <stdexcept>
#include <string_view>
#include <thread>
#include <tuple>

#include "cluster/spread_work.h"
#include "dataplane/loopback/partition_reports.h"
#include "dataplane/loopback/twin_queue_sampler.h"
#include "dataplane/worker.h"
#include "nic/port_frame_format.h"
#include "twin/layout/configured_layout.h"

namespace etwire::dataplane {

class PartitionedDataPlane::QueueSampling {
 public:
  QueueSampling(twin::PartitionedTwin& twin, QueueSink& sink, clock::Nanos interval,
                const cluster::Session* session)
      : twin_(twin), sink_(sink), session_(session) {
    const size_t switch_ports = twin.layout().switch_ports();
    for (const uint32_t p : twin.partitions_here()) {
      std::vector<bool> owned(switch_ports);
      for (size_t port = 0; port < switch_ports; ++port) {
        owned[port] = twin.partition_of_switch_port(port) == p;
      }
      parts_.push_back(std::make_unique<Part>(twin.twin(p), interval, std::move(owned)));
      twin.set_watch(p, parts_.back().get());
    }
  }

  ~QueueSampling() {
    for (const uint32_t p : twin_.partitions_here()) twin_.set_watch(p, nullptr);
  }

  // Between windows: the rows the partitions took in the last one, to the sink; spread over
  // processes, every process's rows (collective).
  void flush() {
    if (twin_.spread()) {
      std::string mine;
      for (auto& part : parts_) {
        cluster::append_records(mine, std::span<const QueueRow>(part->rows));
        part->rows.clear();
      }
      for (const std::string& theirs : session_->all_gather(mine)) {
        std::string_view in = theirs;
        cluster::take_records(in, in.size() / sizeof(QueueRow), merged_);
      }
    }
    for (auto& part : parts_) {
      merged_.insert(merged_.end(), part->rows.begin(), part->rows.end());
      part->rows.clear();
    }
    std::sort(merged_.begin(), merged_.end(), [](const QueueRow& a, const QueueRow& b) {
      return std::tie(a.at, a.queue.switch_port, a.queue.priority) <
             std::tie(b.at, b.queue.switch_port, b.queue.priority);
    });
    const twin::FabricLayout& layout = twin_.layout();
    for (const QueueRow& row : merged_) {
      sink_.append(row, layout.switch_port(row.queue.switch_port).name);
    }
    merged_.clear();
  }

 private:
  // One partition's sampler, which writes its rows here until the window ends.
  struct Part final : twin::PartitionedTwin::Watch, QueueSink {
    Part(const twin::FabricTwin& twin, clock::Nanos interval, std::vector<bool> owned)
        : sampler(twin, *this, interval, std::move(owned)) {}
    void before(clock::Nanos time) override { sampler.take_until(time); }
    void append(const QueueRow& row, std::string_view) override { rows.push_back(row); }

    TwinQueueSampler sampler;
    std::vector<QueueRow> rows;
  };

  twin::PartitionedTwin& twin_;
  QueueSink& sink_;
  const cluster::Session* session_;  // spread over processes
  std::vector<std::unique_ptr<Part>> parts_;
  std::vector<QueueRow> merged_;
};

namespace {

// 0: one per core; spread over processes, one per core of the host's share for this process, as
// more threads than cores would leave each window waiting for the scheduler.
uint32_t threads_to_use(uint32_t threads, const cluster::Session* session) {
  if (threads > 0) return threads;
  uint32_t sharing = 1;
  if (session != nullptr) {
    const std::vector<std::string>& hosts = session->hosts();
    sharing = static_cast<uint32_t>(std::count(hosts.begin(), hosts.end(), session->host()));
  }
  return std::max(1u, std::thread::hardware_concurrency() / std::max(1u, sharing));
}

}  // namespace

// Spread over processes: the counters every process's partitions counted, summed.
struct PartitionedDataPlane::Settled {
  std::vector<transport::TransportPortCounters> transport;  // by run port
  std::vector<double> paced_rates;                          // by run port
  bool finished = false;
  std::vector<transport::QpStats> qps;  // once finished
};

PartitionedDataPlane::PartitionedDataPlane(const config::RunConfig& config,
                                           transport::FlowObserver& observer, uint32_t threads,
                                           const twin::FabricLayout* layout,
                                           std::vector<uint64_t> host_weights, SpreadOver spread)
    : TwinDataPlane(config, observer),
      twin_(layout != nullptr
                ? twin::PartitionedTwin(config.fabric, *layout, config.run.seed,
                                        config.fabric.partitions, host_weights, spread.session)
                : twin::PartitionedTwin(config.fabric, specs(), config.run.seed,
                                        config.fabric.partitions, spread.session)),
      spread_(spread) {
  if (twin_.spread() && config.telemetry.record.pcap) {
    throw std::invalid_argument(
        "telemetry.record.pcap with the fabric twin spread over processes: not built yet (each "
        "process would capture only its own partitions' frames); run it in one process, or "
        "without the capture");
  }
  for (uint32_t p = 0; p < twin_.partitions(); ++p) {
    partitions_.push_back(
        std::make_unique<Partition>(config.transport, twin_.clock(p), p, requester_partition_));
  }
  for (size_t p = 0; p < specs().size(); ++p) {
    const auto run_port = static_cast<uint32_t>(p);
    if (!drives_here(run_port)) continue;
    const config::PortConfig& port = twin::host_port_settings(config, p);
    partition_of(run_port).worker().add_port(twin_.port(p), run_port, 0, port.qos,
                                             nic::frame_format(config, port));
  }
  join_tail_ = std::make_unique<JoinTail>(*this, join());
  twin_.set_window_tail(join_tail_.get());
  relay_ = std::make_unique<ReportRelay>(partitions_, *join_tail_);
  capture_if_recorded(config, [this](twin::Endpoint endpoint, twin::FrameTap* tap) {
    twin_.set_frame_tap(endpoint, tap);
  });
  twin_.set_threads(threads_to_use(threads, spread.session));
}

transport::ConnectionId PartitionedDataPlane::connect(const WireConnection& connection) {
  const uint32_t requester = connection.requester.qpn;
  if (requester >= requester_partition_.size()) requester_partition_.resize(requester + 1, 0);
  requester_partition_[requester] = twin_.partition_of_host(connection.requester.port);
  return TwinDataPlane::connect(connection);
}

Worker& PartitionedDataPlane::worker_of(uint32_t port) {
  return partition_of(port).worker();
}

const Worker& PartitionedDataPlane::worker_of(uint32_t port) const {
  return partition_of(port).worker();
}

void PartitionedDataPlane::for_each_worker(const std::function<void(Worker&)>& visit) {
  for (const uint32_t p : twin_.partitions_here()) visit(partitions_[p]->worker());
}

// The twin's threads stop first; the partitions' clocks (in the twin) hold events that point at
// the partitions, which are not run again.
PartitionedDataPlane::~PartitionedDataPlane() = default;

clock::Nanos PartitionedDataPlane::next_event_time() const {
  if (!twin_.spread()) return std::min(twin_.next_event_time(), engine_clock_.next_event_time());
  if (next_stale_) agree_on_next();
  return std::min(agreed_next_, engine_clock_.next_event_time());
}

void PartitionedDataPlane::agree_on_next() const {
  const bool stop =
      spread_.stop_requested != nullptr && spread_.stop_requested->load(std::memory_order_relaxed);
  std::array<int64_t, 2> values{twin_.next_event_time(), stop ? 0 : 1};
  cluster::all_min(*spread_.session, values);
  agreed_next_ = values[0];
  next_stale_ = false;
  if (values[1] == 0 && spread_.stop_agreed != nullptr) {
    spread_.stop_agreed->store(true, std::memory_order_relaxed);
  }
}

void PartitionedDataPlane::share_reports() {
  std::string mine;
  for (const uint32_t p : twin_.partitions_here()) {
    const std::vector<Partition::Report>& reports = partitions_[p]->reports();
    cluster::append_value(mine, p);
    cluster::append_value(mine, static_cast<uint64_t>(reports.size()));
    cluster::append_records(mine, std::span<const Partition::Report>(reports));
  }
  for (const std::string& theirs : spread_.session->all_gather(mine)) {
    std::string_view in = theirs;
    while (!in.empty()) {
      const auto p = cluster::take_value<uint32_t>(in);
      const auto count = cluster::take_value<uint64_t>(in);
      if (p >= partitions_.size()) throw std::runtime_error("flow reports of an unknown partition");
      if (twin_.runs_here(p)) {
        in.remove_prefix(std::min<size_t>(in.size(), count * sizeof(Partition::Report)));
        continue;
      }
      cluster::take_records(in, count, partitions_[p]->reports());
    }
  }
}

bool PartitionedDataPlane::run_report_lanes(ReportLanes& lanes) {
  lanes.open_lanes(twin_.partitions());
  join_tail_->set_lanes(&lanes);
  return true;
}

void PartitionedDataPlane::poll() {
  const clock::Nanos start = next_event_time();
  if (start == clock::kNever) return;
  const clock::Nanos end = start + twin_.lookahead();
  // An event of the engine's own in the window (a compute's end, a drain) could reach any
  // member: its reports are then the engine's alone.
  join_tail_->lanes_for_window(engine_clock_.next_event_time() >= end);
  twin_.run_window(end);
  if (sampling_) sampling_->flush();
  if (join_tail_->took_lanes()) {
    ++windows_in_lanes_;
    const std::vector<LaneReport>& reports = join_tail_->lane_reports();
    for (size_t i = 0; i < reports.size(); ++i) {
      if (i == 0 || reports[i].at != reports[i - 1].at) {
        engine_clock_.run_at(reports[i].at, relay_.get(), ReportRelay::kLaneInstant | i);
      }
    }
    engine_clock_.run_until(end - 1);
    for (auto& partition : partitions_) partition->reports().clear();
    next_stale_ = true;
    return;
  }
  for (uint32_t p = 0; p < partitions_.size(); ++p) {
    const std::vector<Partition::Report>& reports = partitions_[p]->reports();
    for (uint32_t i = 0; i < reports.size(); ++i) {
      engine_clock_.run_at(reports[i].at, relay_.get(), (uint64_t{p} << 32) | i);
    }
  }
  engine_clock_.run_until(end - 1);
  for (auto& partition : partitions_) partition->reports().clear();
  next_stale_ = true;
}

uint64_t PartitionedDataPlane::events_run() const {
  return twin_.events_run() + engine_clock_.events_run();
}

void PartitionedDataPlane::post(transport::ConnectionId connection, uint64_t bytes,
                                const transport::FlowTags& tags) {
  // The requester's partition has run up to the end of the window; a lookahead from now is past
  // it (the window started no later than now).
  const clock::Nanos at = engine_clock_.now() + twin_.lookahead();
  join().posted(connection.requester, bytes, tags, at);
  // Spread over processes, every engine posts it; the process that runs the requester sends it.
  const uint32_t partition = twin_.partition_of_host(join().sending_port(connection.requester));
  if (twin_.runs_here(partition)) {
    partitions_[partition]->post_at(at, connection.requester, bytes, tags);
  }
  next_stale_ = true;
}

bool PartitionedDataPlane::append_qp_stats(std::vector<transport::QpStats>& out) {
  if (twin_.spread()) {
    if (!settled_ || !settled_->finished) return false;
    out.insert(out.end(), settled_->qps.begin(), settled_->qps.end());
    return true;
  }
  for (auto& partition : partitions_) {
    partition->worker().append_qp_stats(out, partition->clock().now());
  }
  return true;
}

void PartitionedDataPlane::settle_counters() {
  if (!twin_.spread()) return;
  twin_.settle_counters();
  if (!settled_) settled_ = std::make_unique<Settled>();
  std::vector<transport::TransportPortCounters>& transport = settled_->transport;
  transport.assign(ports(), {});
  for (uint32_t port = 0; port < ports(); ++port) {
    if (twin_.runs_here(twin_.partition_of_host(port))) {
      transport[port] = partition_of(port).worker().counters(port);
    }
  }
  cluster::all_sum_counters(*spread_.session, transport);
  // A port's rate is its own worker's (the others' are 0 there): the sum is exact.
  TwinDataPlane::paced_rates_bps(settled_->paced_rates);
  cluster::all_sum(*spread_.session, settled_->paced_rates);
}

transport::TransportPortCounters PartitionedDataPlane::transport_counters(uint32_t port) const {
  if (!twin_.spread()) return TwinDataPlane::transport_counters(port);
  return settled_ ? settled_->transport.at(port) : transport::TransportPortCounters{};
}

void PartitionedDataPlane::paced_rates_bps(std::vector<double>& per_port) {
  if (!twin_.spread()) return TwinDataPlane::paced_rates_bps(per_port);
  if (settled_) {
    per_port = settled_->paced_rates;
  } else {
    per_port.assign(ports(), 0.0);
  }
}

// Spread over processes: the last counters, and every process's QP halves in the order of
// their partitions, as one process appends them.
void PartitionedDataPlane::finish() {
  if (twin_.spread()) {
    settle_counters();
    std::string mine;
    std::vector<transport::QpStats> halves;
    for (const uint32_t p : twin_.partitions_here()) {
      halves.clear();
      partitions_[p]->worker().append_qp_stats(halves, partitions_[p]->clock().now());
      cluster::append_value(mine, p);
      cluster::append_value(mine, static_cast<uint64_t>(halves.size()));
      cluster::append_records(mine, std::span<const transport::QpStats>(halves));
    }
    std::vector<std::vector<transport::QpStats>> by_partition(partitions_.size());
    for (const std::string& theirs : spread_.session->all_gather(mine)) {
      std::string_view in = theirs;
      while (!in.empty()) {
        const auto p = cluster::take_value<uint32_t>(in);
        const auto count = cluster::take_value<uint64_t>(in);
        cluster::take_records(in, count, by_partition.at(p));
      }
    }
    for (const auto& qps : by_partition) {
      settled_->qps.insert(settled_->qps.end(), qps.begin(), qps.end());
    }
    settled_->finished = true;
  }
  TwinDataPlane::finish();
}

// Between windows: the partitions' threads wait at the twin's barrier.
void PartitionedDataPlane::capture_frames(const std::string& dir) {
  begin_capture(dir, engine_clock_.now());
}

void PartitionedDataPlane::sample_queues(QueueSink& sink, clock::Nanos interval_ns) {
  if (interval_ns <= 0) throw std::invalid_argument("queue samples need an interval above 0");
  sampling_ = std::make_unique<QueueSampling>(twin_, sink, interval_ns, spread_.session);
}

}  // namespace etwire::dataplane

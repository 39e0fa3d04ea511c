// The loopback data plane in parallel virtual time (fabric.partitions above 1): the fabric twin
// in partitions (twin/partition/partitioned_twin.h), each with a worker for its hosts' ports on its
// own clock, run window by window on several threads; the engine on a clock of its own, between
// windows, on the caller's thread.
//
// What the engine does in a window it does after the partitions ran it: the flow join takes the
// window's flow reports on the window's threads as it closes, and what they came to reaches the
// engine at their times, in a fixed order (partition, then report); its own events up to the
// window's end run among them. What it asks of the data plane acts one lookahead later (the
// window's length, the shortest delay of a cut cable): a message it posts at t is posted on its
// requester's transport at t + lookahead, past the end of every partition's window, as a host's
// collective library reacts a little after a completion. So the engine's decisions never reach
// into a partition's past, and a run's results depend on the partition count, never on the
// threads.
//
// Spread over the processes of an MPI session (SpreadOver), every process runs the whole engine,
// but builds and runs only its own partitions (PartitionedTwin) and their workers: after each
// window the processes swap their partitions' flow reports, so every engine sees every report in
// the same order as on threads of one process and makes the same decisions; a message it posts
// goes on the clock of the process whose partition holds its requester. The processes agree on
// the next window's start and on a stop request after each window; counters and QP statistics
// are summed over them where the engine reads them in the same place in every process
// (settle_counters, finish). The results are those of the same partitions on threads.
#pragma once

#include <atomic>
#include <memory>
#include <string>
#include <vector>

#include "clock/virtual_clock.h"
#include "cluster/session.h"
#include "config/run_config.h"
#include "dataplane/loopback/twin_data_plane.h"
#include "twin/partition/partitioned_twin.h"

namespace etwire::dataplane {

// The processes a partitioned twin is spread over, and the run's stop: `stop_requested` is this
// process's (a signal), `stop_agreed` the one its engine reads, set in every process after the
// same window once any process's request was seen. All must outlive the data plane.
struct SpreadOver {
  const cluster::Session* session = nullptr;
  const std::atomic<bool>* stop_requested = nullptr;
  std::atomic<bool>* stop_agreed = nullptr;
};

class PartitionedDataPlane final : public TwinDataPlane {
 public:
  // `threads` run the partitions (at most one each; 0: one per core the machine has, shared with
  // the other processes on its host when spread over processes). Throws
  // std::invalid_argument when a port is not a loopback port or the twin cannot be built or cut
  // (the twin's message). `config` and `observer` must outlive the data plane. `layout`: the
  // twin's, laid out by the plan of the run from the same configuration; nullptr: laid out here.
  // `host_weights`: what each twin host moves (the traffic plan's bytes), so that partitions
  // carry about equal traffic (twin::partition_fabric); empty: equal groups of leaves.
  // `spread`: the processes, when the partitions are spread over several (its session nullptr:
  // all here); telemetry.record.pcap is not built for them and is refused (std::invalid_argument).
  PartitionedDataPlane(const config::RunConfig& config, transport::FlowObserver& observer,
                       uint32_t threads, const twin::FabricLayout* layout = nullptr,
                       std::vector<uint64_t> host_weights = {}, SpreadOver spread = {});
  ~PartitionedDataPlane() override;

  clock::Scheduler& scheduler() override { return engine_clock_; }
  clock::Nanos next_event_time() const override;
  // One window: every partition's events in it, then the engine's.
  void poll() override;
  uint64_t events_run() const override;
  void post(transport::ConnectionId connection, uint64_t bytes,
            const transport::FlowTags& tags) override;
  // Notes the partition of the requester, for the flow join's threads.
  transport::ConnectionId connect(const WireConnection& connection) override;
  // One lane per partition; a window whose lanes can all take their reports, and in which the
  // engine has no event of its own, goes to them on the window's threads (partition_reports.h).
  bool run_report_lanes(ReportLanes& lanes) override;
  // Spread over processes: every process's QP halves once the run finished; before, none (false).
  bool append_qp_stats(std::vector<transport::QpStats>& out) override;
  void settle_counters() override;
  void paced_rates_bps(std::vector<double>& per_port) override;
  void finish() override;
  void capture_frames(const std::string& dir) override;
  // A sampler in each partition for the switch ports it owns, run by the partition's thread
  // between its events; the window's rows reach `sink` after the window, ordered by time, then
  // switch port and priority, as the whole twin's sampler writes them.
  void sample_queues(QueueSink& sink, clock::Nanos interval_ns) override;

  uint32_t partitions() const { return twin_.partitions(); }
  uint32_t threads() const { return twin_.threads(); }
  uint64_t windows_run() const { return twin_.windows_run(); }
  // Windows whose reports the engine's lanes took (run_report_lanes).
  uint64_t windows_in_lanes() const { return windows_in_lanes_; }

 private:
  class Partition;
  class JoinTail;
  class ReportRelay;
  class QueueSampling;
  struct Settled;

  Partition& partition_of(uint32_t port) { return *partitions_[twin_.partition_of_host(port)]; }
  const Partition& partition_of(uint32_t port) const {
    return *partitions_[twin_.partition_of_host(port)];
  }
  bool drives_here(uint32_t port) const override {
    return twin_.runs_here(twin_.partition_of_host(port));
  }
  Worker& worker_of(uint32_t port) override;
  const Worker& worker_of(uint32_t port) const override;
  void for_each_worker(const std::function<void(Worker&)>& visit) override;
  const twin::FabricLayout& layout() const override { return twin_.layout(); }
  twin::WireCounters host_counters(size_t host) const override { return twin_.host_counters(host); }
  twin::WireCounters switch_port_counters(size_t switch_port) const override {
    return twin_.switch_port_counters(switch_port);
  }
  std::vector<std::string> fault_report() const override { return twin_.fault_report(); }
  transport::TransportPortCounters transport_counters(uint32_t port) const override;
  // Spread over processes: every partition's reports of the window, from the process that ran it.
  void share_reports();
  // Spread over processes: the next window's start and the stop, agreed by every process.
  void agree_on_next() const;

  clock::VirtualClock engine_clock_;
  twin::PartitionedTwin twin_;
  // The partition of each requester, by QP number: read by the partitions' threads in a window,
  // written by connect() between windows.
  std::vector<uint32_t> requester_partition_;
  std::vector<std::unique_ptr<Partition>> partitions_;
  std::unique_ptr<JoinTail> join_tail_;
  std::unique_ptr<ReportRelay> relay_;
  std::unique_ptr<QueueSampling> sampling_;  // with telemetry.record.queue_sample_interval
  SpreadOver spread_;
  // Spread over processes: the earliest event of every process's partitions, once agreed (it is
  // stale after a window or a post, until the next read agrees on it again).
  mutable clock::Nanos agreed_next_ = clock::kNever;
  mutable bool next_stale_ = true;
  std::unique_ptr<Settled> settled_;  // spread over processes, once settle_counters ran
  uint64_t windows_in_lanes_ = 0;
};

}  // namespace etwire::dataplane

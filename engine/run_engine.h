// The run engine: replays every job of a loaded configuration on the data plane and collects the
// results. One RankRuntime per trace rank of every job pulls nodes from its feeder; compute and
// memory nodes become delays, a collective node joins its collective instance (job, group,
// sequence) and runs its member's step program over the transport, SEND and RECV nodes match by
// peer, tag and order (sends are eager: a SEND's bytes may arrive before its RECV is issued). A
// node completes when its part is done (its sends acknowledged, its receives delivered), which
// releases its dependents. Each job replays its trace for its warm-up and measured iterations; jobs
// share the fabric.
//
// A run ends when every rank of every job has finished, or when the watchdog finds that nothing
// progressed (no node and no flow completed) for run.watchdog of virtual time, or that nothing can
// progress at all (no event is pending), or when members of an instance disagree about it; then
// RunResults::diagnosis says what waits on what. A stop request ends it early.
#pragma once

#include <atomic>
#include <chrono>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "clock/scheduler.h"
#include "cluster/session.h"
#include "control/resolve/config_loader.h"
#include "dataplane/data_plane.h"
#include "engine/collective_instances.h"
#include "engine/fct_percentiles.h"
#include "engine/flow_sink.h"
#include "engine/node_sink.h"
#include "engine/partial_results.h"
#include "engine/port_sampler.h"
#include "engine/port_series_sink.h"
#include "engine/posting.h"
#include "engine/queue_sample_tee.h"
#include "engine/rank_runtime.h"
#include "engine/replayed_job.h"
#include "engine/run_control.h"
#include "engine/run_results.h"
#include "engine/split_run.h"
#include "engine/telemetry/metric_labels.h"
#include "engine/telemetry/record_ring.h"
#include "engine/telemetry_publisher.h"
#include "trace/trace_set.h"
#include "transport/transport.h"

namespace etwire::engine {

// What a progress line shows, about once a second of wall time: the results so far, the run
// clock and what each port this process drives has sent.
struct ProgressSample {
  const RunResults* so_far = nullptr;
  clock::Nanos now = 0;  // the run clock: virtual time on the twin
  // The ports this process drives, in the data plane's order: names, and wire bytes sent so far.
  std::vector<std::string> port_names;
  std::vector<uint64_t> port_tx_bytes;
};

struct RunOptions {
  // Flow records are streamed here as flows finish (flows.csv); nullptr = not written.
  FlowSink* flows = nullptr;
  // The nodes that took time, as each completes (nodes.csv); nullptr = not written.
  NodeSink* nodes = nullptr;
  // Set (from a signal handler) to stop the run at the next event; the run then reports
  // kInterrupted.
  const std::atomic<bool>* stop = nullptr;
  // Called about once a second of wall time with the results so far (a progress line).
  void (*progress)(const ProgressSample& sample, void* context) = nullptr;
  void* progress_context = nullptr;
  // Overrides run.watchdog (virtual nanoseconds without progress); 0 keeps the config's.
  clock::Nanos watchdog_ns = 0;
  // Overrides run.time_scale (virtual seconds per wall-clock second; 0 = as fast as possible).
  std::optional<double> time_scale;
  // Telemetry records go here: every flow, collective instance and iteration of the measured
  // iterations as it finishes, and every telemetry_period of wall time (and once at the end) the
  // running totals of the run, its jobs and its ports. nullptr = none.
  telemetry::RecordRing* telemetry = nullptr;
  std::chrono::milliseconds telemetry_period{100};
  // Builds the data plane the engine drives (the caller's choice: runner/data_plane_choice.h);
  // required.
  dataplane::DataPlaneFactory data_plane;
  // Whether the engine's work on a partitioned twin's windows of flow reports may run on the
  // window's threads (dataplane/report_lanes.h; run_engine_lanes.cc). The results are the same
  // either way; false keeps all of it on the engine's thread.
  bool report_lanes = true;
  // The emulator processes of a run split between several (an emulators section, started by an
  // MPI launcher): this process replays only the ranks mapped to its emulator's ports. nullptr or
  // a session of one: every rank here.
  const cluster::Session* session = nullptr;
};

// The engine composes its parts: SplitRun (which ranks this process replays, what crosses between
// emulator processes), Posting (connections, messages, local transfers, the transport's queued
// notifications), CollectiveInstances (joining instances and running their members' step
// programs) and TelemetryPublisher (the telemetry records); it feeds nodes to the ranks, keeps the
// watchdog and the clocks, and reports.
class RunEngine final : private transport::FlowObserver,
                        private clock::EventHandler,
                        private RunControl,
                        private dataplane::ReportLanes {
 public:
  // `loaded` must be a plan without errors, every job's trace set opened, every job placed and
  // addressed, and (split between emulator processes) its traffic planned; it must outlive the
  // engine. Throws std::invalid_argument when the configuration cannot be run (a
  // backend the engine does not drive, a fabric the twin cannot model) and trace::TraceError when
  // a trace cannot be opened.
  // Throws std::invalid_argument without options.data_plane.
  RunEngine(const control::RunPlan& loaded, RunOptions options);
  ~RunEngine();
  RunEngine(const RunEngine&) = delete;
  RunEngine& operator=(const RunEngine&) = delete;

  // Runs to the end (see above). Trace errors met while replaying (a cycle, a bad node) throw
  // trace::TraceError after the results so far are final: results() stays readable.
  const RunResults& run();
  // Where flow records go from now on (flows.csv); nullptr stops recording them.
  void set_flow_writer(FlowSink* flows) { options_.flows = flows; }
  // Where the nodes that took time go as they complete (nodes.csv); nullptr stops recording them.
  void set_node_writer(NodeSink* nodes) { options_.nodes = nodes; }
  // Where samples of the twin's queues go (telemetry.record.queue_sample_interval; queues.csv),
  // besides telemetry; nullptr = none.
  void set_queue_writer(dataplane::QueueSink* queues) { queue_samples_.set_writer(queues); }
  // telemetry.record.pcap: the data plane writes every port's frames under `dir` from now on
  // (DataPlane::capture_frames; throws std::runtime_error naming what cannot be created).
  void capture_frames(const std::string& dir) { data_plane_->capture_frames(dir); }
  // Where the time series of port counters goes (telemetry.record.port_sample_interval;
  // ports.csv); nullptr = none. Before run().
  void set_port_writer(PortSeriesSink* ports);
  // Where telemetry records go from now on (RunOptions::telemetry); nullptr stops them.
  void set_telemetry(telemetry::RecordRing* ring) {
    telemetry_.set_ring(ring);
    queue_samples_.set_telemetry(ring);
  }
  // The names behind the indexes in this run's telemetry records: run, jobs and ports.
  telemetry::MetricLabels metric_labels() const;
  const RunResults& results() const { return results_; }
  // What the data plane found while setting up (DataPlane::notes), before the run starts.
  std::vector<std::string> setup_notes() const { return data_plane_->notes(); }
  // Whether this process replays rank `rank` of job `job` (always, unless the run is split
  // between emulator processes).
  bool rank_here(uint32_t job, int32_t rank) const { return split_.rank_here(job, rank); }
  // The run's clock read beside this process's steady clock (std::chrono::steady_clock, which the
  // emulator processes' offsets are measured with), when the run began and when it ended: how to
  // put the run's times on the steady clock, its rate included.
  struct ClockPair {
    int64_t steady_ns = 0;
    clock::Nanos run_ns = 0;
  };
  ClockPair clock_at_start() const { return clock_at_start_; }
  ClockPair clock_at_end() const { return clock_at_end_; }
  // A message posted by another emulator process that reached its receiver here (SplitRun).
  using RemoteDelivery = engine::RemoteDelivery;
  const std::vector<RemoteDelivery>& remote_deliveries() const {
    return split_.remote_deliveries();
  }
  // This process's part of a run split between emulator processes (after run()): its results,
  // its FCT samples, the ranks and ports it has; the time shift is the caller's to set.
  PartialResults partial_results() const;

 private:
  // transport::FlowObserver
  transport::FlowObserver& flow_observer() { return *this; }
  void on_flow_delivered(const transport::FlowRecord& record) override;
  void on_flow_finished(const transport::FlowRecord& record) override;
  void on_delivered_to_responder(uint32_t requester_qpn, clock::Nanos now, uint32_t ecn_marks,
                                 uint32_t immediate) override;
  // clock::EventHandler
  void on_event(uint64_t tag, clock::Nanos now) override;
  // What a report comes to (run_engine_flows.cc): for a finish, what the engine's thread records
  // (flows.csv, counters, FCT, telemetry), then the work on the member (in `lane`, at `turn`).
  void delivered_flow_work(PostingLane& lane, const transport::FlowRecord& record, Turn turn);
  CollectiveInstance* note_finished_flow(const transport::FlowRecord& record);
  void finished_flow_work(PostingLane& lane, const transport::FlowRecord& record,
                          CollectiveInstance* instance, Turn turn);

  // dataplane::ReportLanes (run_engine_lanes.cc).
  void open_lanes(uint32_t lanes) override;
  bool lane_can_take(uint32_t lane, std::span<const dataplane::LaneReport> reports) override;
  void take_in_lane(uint32_t lane, std::span<const dataplane::LaneReport> reports) override;
  void settle_instant(std::span<const dataplane::LaneReport> reports) override;
  // Whether this run's reports may ever go to lanes: a run in virtual time in one process, whose
  // ranks share no host and take no part in CollNet (their work reaches other members' state).
  bool lanes_possible() const;

  // Feeding and completing nodes (run_engine.cc).
  void start_iteration(uint32_t runtime, uint32_t iteration);
  void pump(uint32_t runtime);
  void start_node(uint32_t runtime, feeder::IssuedNode issued);
  void settle();
  void finish_rank_iteration(uint32_t runtime);

  // RunControl
  void complete_node(uint32_t runtime, feeder::IssuedNode issued, NodeActivity activity) override;
  void stop_stuck(std::string diagnosis) override;
  // A drained flow event, unless the run stopped.
  void handle(const FlowEvent& event);
  // At the end: the data plane's QP halves, each with the connection it belongs to
  // (run_engine_qps.cc).
  void collect_qp_records();
  void retire_finished_instances();
  bool stop_requested() const {
    return options_.stop != nullptr && options_.stop->load(std::memory_order_relaxed);
  }

  // The wall clock: waiting for it when the run replays at run.time_scale, and what is due every
  // so often (run_engine.cc).
  void keep_to_time_scale(double time_scale, std::chrono::steady_clock::time_point wall_start);
  void every_so_often(std::chrono::steady_clock::time_point now);

  // Stopping and reporting (run_engine_report.cc).
  std::string describe_rank(uint32_t job, int32_t rank) const;
  std::string diagnose_stall(const std::string& why) const;
  // For a split run whose flows failed here: why the other processes wait (empty otherwise).
  std::string failed_flows_cause() const;
  void finalize();
  // Starts the twin's queue samples when telemetry.record.queue_sample_interval asks for them.
  void sample_queues();

  const control::RunPlan& loaded_;
  const config::RunConfig& config_;
  RunOptions options_;
  std::unique_ptr<dataplane::DataPlane> data_plane_;
  clock::Scheduler& clock_;
  SplitRun split_;
  Posting posting_;
  std::vector<ReplayedJob> jobs_;
  std::vector<RankRuntime> runtimes_;
  CollectiveInstances instances_;
  TelemetryPublisher telemetry_;
  uint32_t runtimes_finished_ = 0;
  ClockPair clock_at_start_;
  ClockPair clock_at_end_;
  ClockPair read_clocks() const;
  std::vector<uint32_t> collective_members_here_;  // parallel to results_.collectives
  // Samples of the twin's queues, to the queue writer and to telemetry.
  QueueSampleTee queue_samples_;
  // The port counters' time series, when asked for and written somewhere.
  std::unique_ptr<PortSampler> port_sampler_;

  // Nodes to complete and runtimes to pump, handled by settle() without recursion.
  struct Completion {
    uint32_t runtime = 0;
    feeder::IssuedNode node;
    NodeActivity activity = NodeActivity::kNone;
  };
  std::vector<Completion> completions_;
  std::vector<uint32_t> dirty_;
  std::vector<uint32_t> pumping_;  // dirty_ taken for pumping (kept to reuse its storage)
  std::vector<uint8_t> is_dirty_;

  // The lanes of a partitioned twin's windows, when its data plane runs them, and the members
  // each lane's check found (scratch kept to reuse its storage).
  std::vector<PostingLane> lanes_;
  struct LaneCheck {
    std::vector<const InstanceMember*> touched;
    std::vector<const InstanceMember*> finishing;  // once per send it completes
  };
  std::vector<LaneCheck> lane_checks_;

  // FCT samples of measured flows by collective kind (index kCollectiveTypeCount: p2p).
  std::vector<FctSamples> fct_samples_;
  clock::Nanos last_progress_ = 0;
  bool stopped_ = false;
  // Wall-clock bookkeeping of run().
  std::chrono::steady_clock::time_point last_report_;
  ProgressSample progress_;
  std::vector<size_t> progress_ports_;  // the data plane's indexes of progress_'s ports
  clock::Nanos virtual_allowed_ = 0;    // time_scale: virtual time the wall clock has reached
  RunResults results_;
};

}  // namespace etwire::engine

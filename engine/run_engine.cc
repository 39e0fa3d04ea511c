// The run engine: construction, the event loop, and feeding nodes to the ranks. What the transport
// reports is in run_engine_flows.cc, the diagnosis and the final results in run_engine_report.cc.
#include "engine/run_engine.h"

#include <fmt/format.h>

#include <chrono>
#include <cmath>
#include <stdexcept>
#include <thread>

#include "control/check/job_filter.h"
#include "control/plan/traffic_plan.h"
#include "engine/engine_event.h"
#include "trace/comm_groups.h"
#include "twin/layout/configured_layout.h"

namespace etwire::engine {

namespace {

std::unique_ptr<dataplane::DataPlane> make_data_plane(const dataplane::DataPlaneFactory& factory,
                                                      const config::RunConfig& config,
                                                      transport::FlowObserver& observer) {
  if (!factory) throw std::invalid_argument("the run engine needs a data plane (RunOptions)");
  return factory(config, observer);
}

// `loaded`, once it is known to be a plan the engine can run.
const control::RunPlan& runnable(const control::RunPlan& loaded) {
  if (!loaded.ok() || !loaded.addresses) {
    throw std::invalid_argument(fmt::format(
        "{}: the configuration has errors or unplaced jobs; run `etwire validate` on it",
        loaded.config.source_file));
  }
  return loaded;
}

}  // namespace

RunEngine::RunEngine(const control::RunPlan& loaded, RunOptions options)
    : loaded_(loaded),
      config_(loaded.config),
      options_(std::move(options)),
      data_plane_(make_data_plane(options_.data_plane, loaded.config, flow_observer())),
      clock_(data_plane_->scheduler()),
      split_(runnable(loaded), options_.session, data_plane_->virtual_time()),
      posting_(loaded, *data_plane_, *this, split_),
      instances_(config_, jobs_, runtimes_, clock_, posting_, split_, *this),
      telemetry_(loaded_, *data_plane_, jobs_, runtimes_, options_.telemetry,
                 options_.telemetry_period) {
  sample_queues();
  const auto& workload = config_.workload.jobs;
  jobs_.reserve(workload.size());
  for (size_t j = 0; j < workload.size(); ++j) {
    const config::JobConfig& job_config = workload[j];
    ReplayedJob job{&job_config,
                    &*loaded.trace_sets.at(j),
                    &*loaded.placements.at(j),
                    control::base_collective_spec(config_, j),
                    static_cast<uint32_t>(runtimes_.size()),
                    0,
                    {},
                    {},
                    {}};
    job.world_size = job.traces->world_size();
    for (int32_t rank = 0; rank < job.world_size; ++rank) {
      runtimes_.emplace_back(static_cast<uint32_t>(j), rank);
    }
    results_.world_size += job.world_size;
    results_.jobs.push_back({job_config.name, job_config.trace, job.world_size,
                             job_config.iterations, job_config.warmup_iterations, 0});
    jobs_.push_back(std::move(job));
  }
  is_dirty_.assign(runtimes_.size(), 0);
  fct_samples_.resize(trace::kCollectiveTypeCount + 1);
  results_.run_name = config_.run.name;
  results_.config_file = config_.source_file;
  results_.config_digest = loaded.config_digest;
  results_.seed = config_.run.seed;
  // The twin's topology, or the lab's: whatever the ports are cabled to.
  results_.topology = data_plane_->virtual_time()
                          ? std::string(config::topology_name(config_.fabric.topology))
                          : "device-under-test";
  results_.wall_clock = !data_plane_->virtual_time();
  for (uint32_t k = 0; k < twin::aggregation_hosts(config_); ++k) {
    results_.aggregation_hosts.push_back(twin::aggregation_host_name(k));
  }
  double goodput = 0;
  for (size_t p = 0; p < data_plane_->ports(); ++p) {
    const double port_goodput = dataplane::goodput_bytes_per_second(config_, p);
    if (p == 0 || port_goodput < goodput) goodput = port_goodput;
  }
  results_.goodput_bytes_per_second = goodput;
  if (options_.report_lanes && lanes_possible()) data_plane_->run_report_lanes(*this);
}

RunEngine::~RunEngine() = default;

RunEngine::ClockPair RunEngine::read_clocks() const {
  ClockPair pair;
  pair.steady_ns = std::chrono::duration_cast<std::chrono::nanoseconds>(
                       std::chrono::steady_clock::now().time_since_epoch())
                       .count();
  pair.run_ns = clock_.now();
  return pair;
}

const RunResults& RunEngine::run() {
  const auto wall_start = std::chrono::steady_clock::now();
  last_report_ = wall_start;
  telemetry_.start(wall_start);
  const clock::Nanos watchdog = options_.watchdog_ns > 0
                                    ? options_.watchdog_ns
                                    : static_cast<clock::Nanos>(config_.run.watchdog_ns);
  const bool virtual_time = data_plane_->virtual_time();
  // The wall clock runs at its own pace: a time scale means nothing there.
  const double time_scale =
      virtual_time ? options_.time_scale.value_or(config_.run.time_scale) : 0.0;
  data_plane_->start();
  clock_at_start_ = read_clocks();
  telemetry_.snapshot(false, results_.status);
  if (port_sampler_) port_sampler_->start(clock_.now());
  try {
    // On the wall clock, a QP set up on a device takes time that belongs to no collective: every
    // planned connection is opened before the first packet. Split between processes, the
    // receiving halves must be open before the other processes send, hence the barrier.
    if (!virtual_time || split_.active()) posting_.open_planned_connections();
    if (split_.active()) {
      data_plane_->finish_connecting();
      options_.session->barrier();
    }
    for (uint32_t r = 0; r < runtimes_.size(); ++r) {
      if (rank_here(runtimes_[r].job(), runtimes_[r].rank())) start_iteration(r, 0);
    }
    settle();
    uint64_t polls = 0;
    // A CollNet aggregation node's last sends are acknowledged after its ranks have finished.
    while (!stopped_ && (runtimes_finished_ < split_.ranks_here() || instances_.any_incomplete())) {
      if (options_.stop && options_.stop->load(std::memory_order_relaxed)) {
        results_.status = RunStatus::kInterrupted;
        results_.diagnosis = diagnose_stall("interrupted");
        break;
      }
      // On the wall clock no pending event proves nothing: frames may still be on the wire.
      if (virtual_time && data_plane_->next_event_time() == clock::kNever) {
        stop_stuck(diagnose_stall("nothing is left to happen, yet ranks are still waiting"));
        break;
      }
      if (data_plane_->next_event_time() - last_progress_ > watchdog) {
        stop_stuck(diagnose_stall(
            fmt::format("no node and no flow completed for {} ns of {} time (run.watchdog)",
                        watchdog, virtual_time ? "virtual" : "wall-clock")));
        break;
      }
      if (time_scale > 0 && data_plane_->next_event_time() > virtual_allowed_) {
        keep_to_time_scale(time_scale, wall_start);
        continue;
      }
      if (port_sampler_) {
        // Between polls, never inside one: no per-packet work (port_sampler.h).
        if (virtual_time) {
          port_sampler_->take_before(data_plane_->next_event_time());
        } else {
          port_sampler_->take_due(data_plane_->next_event_time());
        }
      }
      data_plane_->poll();
      if ((++polls & 0xFFF) == 0) every_so_often(std::chrono::steady_clock::now());
    }
    if (split_.active() && !stop_requested() &&
        !split_.wait_for_other_processes(*data_plane_, options_.stop)) {
      results_.status = RunStatus::kInterrupted;
      results_.diagnosis = "interrupted while waiting for the other emulator processes to finish";
    }
  } catch (...) {
    results_.status = RunStatus::kFailed;
    results_.wall_seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start).count();
    finalize();
    throw;
  }
  results_.wall_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start).count();
  finalize();
  return results_;
}

// Virtual time may run only as far as the wall clock allows: sleeps (a slice at a time, so a stop
// request is seen) until the next event is due.
void RunEngine::keep_to_time_scale(double time_scale,
                                   std::chrono::steady_clock::time_point wall_start) {
  constexpr auto kLongestSleep = std::chrono::milliseconds(20);
  const auto now = std::chrono::steady_clock::now();
  const double elapsed_ns = std::chrono::duration<double, std::nano>(now - wall_start).count();
  virtual_allowed_ = static_cast<clock::Nanos>(elapsed_ns * time_scale);
  const clock::Nanos ahead = data_plane_->next_event_time() - virtual_allowed_;
  if (ahead > 0) {
    const auto wait =
        std::chrono::nanoseconds(static_cast<int64_t>(static_cast<double>(ahead) / time_scale) + 1);
    std::this_thread::sleep_for(std::min<std::chrono::nanoseconds>(wait, kLongestSleep));
  }
  every_so_often(std::chrono::steady_clock::now());
}

// The progress line about once a second, the telemetry snapshot every telemetry_period.
void RunEngine::every_so_often(std::chrono::steady_clock::time_point now) {
  if (options_.progress && now - last_report_ >= std::chrono::seconds(1)) {
    last_report_ = now;
    if (progress_.so_far == nullptr) {
      // The ports this process drives.
      for (size_t p = 0; p < data_plane_->ports(); ++p) {
        dataplane::PortRecord record = data_plane_->port_record(p);
        if (record.driven_elsewhere()) continue;
        progress_ports_.push_back(p);
        progress_.port_names.push_back(std::move(record.name));
      }
      progress_.port_tx_bytes.resize(progress_ports_.size());
      progress_.so_far = &results_;
    }
    progress_.now = clock_.now();
    for (size_t i = 0; i < progress_ports_.size(); ++i) {
      progress_.port_tx_bytes[i] = data_plane_->port_counters(progress_ports_[i]).tx_bytes;
    }
    options_.progress(progress_, options_.progress_context);
  }
  telemetry_.snapshot_when_due(now, results_.status);
}

void RunEngine::on_event(uint64_t tag, clock::Nanos) {
  const uint64_t payload = engine_event::payload(tag);
  switch (engine_event::kind(tag)) {
    case engine_event::kDrain:
      posting_.drain(posting_.own_lane(), [this](const FlowEvent& event) { handle(event); });
      break;
    case engine_event::kComputeDone: {
      const auto runtime = static_cast<uint32_t>(payload >> 32);
      complete_node(runtime, runtimes_[runtime].release(static_cast<uint32_t>(payload)),
                    NodeActivity::kCompute);
      break;
    }
    case engine_event::kLocalDone: {
      const LocalTransfer transfer = posting_.finish_local_transfer(static_cast<uint32_t>(payload));
      last_progress_ = clock_.now();
      instances_.finish_local_transfer(transfer);
      break;
    }
    default:
      break;
  }
  if (!stopped_) settle();
}

void RunEngine::start_iteration(uint32_t runtime, uint32_t iteration) {
  RankRuntime& rt = runtimes_[runtime];
  const ReplayedJob& job = jobs_[rt.job()];
  feeder::FeederOptions options;
  options.filter = control::make_node_filter(job.config->filter);
  rt.begin_iteration(iteration,
                     std::make_unique<feeder::Feeder>(job.traces->open(rt.rank()), options),
                     clock_.now());
  if (!is_dirty_[runtime]) {
    is_dirty_[runtime] = 1;
    dirty_.push_back(runtime);
  }
}

void RunEngine::pump(uint32_t runtime) {
  RankRuntime& rt = runtimes_[runtime];
  if (rt.finished() || stopped_) return;
  while (auto issued = rt.feeder().next()) {
    rt.count_issued();
    start_node(runtime, *issued);
    if (stopped_) return;
  }
  if (rt.feeder().done()) finish_rank_iteration(runtime);
}

void RunEngine::start_node(uint32_t runtime, feeder::IssuedNode issued) {
  RankRuntime& rt = runtimes_[runtime];
  const trace::TraceNode& node = *issued.node;
  const config::JobConfig& job = *jobs_[rt.job()].config;
  switch (node.type) {
    case trace::NodeType::kComp:
    case trace::NodeType::kMemLoad:
    case trace::NodeType::kMemStore: {
      clock::Nanos duration = 0;
      if (job.mode == config::ReplayMode::kFull) {
        duration = static_cast<clock::Nanos>(
            std::llround(static_cast<double>(node.duration_us) * 1000.0 * job.compute_scale));
      }
      if (duration <= 0) {
        completions_.push_back({runtime, issued, NodeActivity::kNone});
        return;
      }
      rt.node_started(NodeActivity::kCompute, issued.slot, clock_.now());
      rt.hold(issued);
      clock_.run_at(
          clock_.now() + duration, this,
          engine_event::tag(engine_event::kComputeDone, (uint64_t{runtime} << 32) | issued.slot));
      return;
    }
    case trace::NodeType::kCommColl:
      if (node.carries_traffic()) return instances_.join_collective(runtime, issued);
      break;
    case trace::NodeType::kCommSend:
    case trace::NodeType::kCommRecv:
      if (node.carries_traffic()) return instances_.join_point_to_point(runtime, issued);
      break;
    default:
      break;
  }
  // Metadata, and communication nodes that move no bytes (CPU-side bookkeeping).
  completions_.push_back({runtime, issued, NodeActivity::kNone});
}

void RunEngine::complete_node(uint32_t runtime, feeder::IssuedNode issued, NodeActivity activity) {
  completions_.push_back({runtime, issued, activity});
}

// Completes queued nodes and pumps the ranks they release, until nothing is left to do at this
// instant. Nothing here recurses: a node that completes at once is queued, not completed inline.
void RunEngine::settle() {
  while (!stopped_) {
    if (!completions_.empty()) {
      for (size_t i = 0; i < completions_.size(); ++i) {
        const Completion c = completions_[i];
        RankRuntime& rt = runtimes_[c.runtime];
        const NodeStart start = rt.node_completed(c.activity, c.node.slot, clock_.now());
        if (options_.nodes != nullptr && c.activity != NodeActivity::kNone) {
          options_.nodes->append({rt.job(), rt.rank(), rt.iteration(), c.node.node, start.instance,
                                  start.at, clock_.now()});
        }
        rt.feeder().complete(c.node);
        last_progress_ = clock_.now();
        if (!is_dirty_[c.runtime]) {
          is_dirty_[c.runtime] = 1;
          dirty_.push_back(c.runtime);
        }
      }
      completions_.clear();
      continue;
    }
    if (dirty_.empty()) break;
    pumping_.swap(dirty_);
    for (uint32_t runtime : pumping_) {
      is_dirty_[runtime] = 0;
      pump(runtime);
    }
    pumping_.clear();
  }
  retire_finished_instances();
}

void RunEngine::finish_rank_iteration(uint32_t runtime) {
  RankRuntime& rt = runtimes_[runtime];
  ReplayedJob& job = jobs_[rt.job()];
  const uint32_t iteration = rt.iteration();
  const RankIteration done = rt.end_iteration(clock_.now());
  const feeder::FeederStats& stats = rt.feeder().stats();
  results_.jobs[rt.job()].nodes_issued += stats.nodes_issued;
  job.nodes_completed_before += stats.nodes_completed + stats.nodes_filtered;

  auto [it, first] = job.iterations.try_emplace(iteration);
  IterationRecord& record = it->second;
  if (first) {
    record.job = rt.job();
    record.iteration = iteration;
    record.warmup = iteration < job.config->warmup_iterations;
    record.ranks.resize(static_cast<size_t>(job.world_size));
    record.start = done.start;
    record.end = done.end;
  }
  record.ranks[static_cast<size_t>(rt.rank())] = done;
  record.start = std::min(record.start, done.start);
  record.end = std::max(record.end, done.end);
  if (++job.ranks_finished_iteration[iteration] == split_.ranks_here(rt.job())) {
    ++job.iterations_completed;
    telemetry_.iteration(record);
    results_.iterations.push_back(std::move(record));
    job.iterations.erase(it);
    job.ranks_finished_iteration.erase(iteration);
  }

  const uint32_t next = iteration + 1;
  if (next < job.config->warmup_iterations + job.config->iterations) {
    start_iteration(runtime, next);
  } else {
    rt.set_finished();
    ++runtimes_finished_;
  }
}

}  // namespace etwire::engine

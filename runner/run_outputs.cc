#include "runner/run_outputs.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <chrono>
#include <iostream>
#include <thread>

#include "runner/stop_signals.h"

namespace etwire::runner {

void RunOutputs::open_telemetry(engine::RunEngine& engine, const config::MetricsEndpoint& metrics) {
  telemetry_.emplace(engine.metric_labels(), metrics);
  engine.set_telemetry(&telemetry_->ring());
}

void RunOutputs::open_files(engine::RunEngine& engine, const config::RecordConfig& record,
                            const std::filesystem::path& out, bool writes_results, bool split) {
  // Split between processes, each keeps its flow records for process 0, which also writes its
  // own as they finish, and rewrites the file with everyone's at the end.
  flows_path_ = (out / "flows.csv").string();
  if (record.flows) {
    if (writes_results) flows_.emplace(flows_path_);
    if (split) split_flows_.emplace(flows_ ? &*flows_ : nullptr);
    engine.set_flow_writer(split    ? static_cast<engine::FlowSink*>(&*split_flows_)
                           : flows_ ? &*flows_
                                    : nullptr);
  } else {
    engine.set_flow_writer(nullptr);
  }
  // The nodes that took time, on by default; a split run's processes each number the collective
  // instances they see, so their rows would not join collectives.csv (validate refuses the key).
  if (record.nodes.value_or(true) && !split && writes_results) {
    std::vector<std::string> job_names;
    for (const engine::JobSummary& job : engine.results().jobs) job_names.push_back(job.name);
    nodes_.emplace((out / "nodes.csv").string(), std::move(job_names));
    engine.set_node_writer(&*nodes_);
  }
  // Samples of the twin's queues (loopback runs only: validate refuses the key elsewhere).
  if (record.queue_sample_interval_ns > 0 && writes_results) {
    queues_.emplace((out / "queues.csv").string());
    engine.set_queue_writer(&*queues_);
  }
  // The port counters over time, on the data plane's clock: on unless the interval is set to 0.
  const auto& port_interval = record.port_sample_interval_ns;
  if ((!port_interval || *port_interval > 0) && writes_results) {
    ports_.emplace((out / "ports.csv").string());
    engine.set_port_writer(&*ports_);
  } else if ((!port_interval || *port_interval > 0) && !split) {
    engine.set_port_writer(&no_port_series_);
  }
}

void RunOutputs::rewrite_flows(const std::vector<transport::FlowRecord>& records) {
  if (!flows_) return;
  flows_->close();
  flows_.emplace(flows_path_);
  for (const transport::FlowRecord& record : records) flows_->append(record);
}

std::string RunOutputs::finish_telemetry() {
  if (!telemetry_) return "";
  telemetry_->finish();
  if (std::string error = telemetry_->push(&stop_requested()); !error.empty()) {
    return fmt::format("{}; the results files have everything", error);
  }
  return "";
}

bool RunOutputs::close_files() {
  bool written = true;
  const auto close = [&](auto& file) {
    if (!file) return;
    try {
      file->close();
      spdlog::debug("wrote {}", file->path());
    } catch (const std::exception& e) {
      std::cerr << fmt::format("error: {}\n", e.what());
      written = false;
    }
  };
  close(flows_);
  close(queues_);
  close(ports_);
  close(nodes_);
  return written;
}

void RunOutputs::linger() const {
  if (!telemetry_) return;
  const auto* server = telemetry_->server();
  if (server == nullptr || telemetry_->linger().count() == 0) return;
  std::cerr << fmt::format("serving the final metrics at {} for {:.1f} s more (Ctrl-C ends it)\n",
                           server->url(),
                           std::chrono::duration<double>(telemetry_->linger()).count());
  const auto until = std::chrono::steady_clock::now() + telemetry_->linger();
  while (!stop_requested().load(std::memory_order_relaxed) &&
         std::chrono::steady_clock::now() < until) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

}  // namespace etwire::runner

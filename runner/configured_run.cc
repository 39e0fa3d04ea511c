#include "runner/configured_run.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "cluster/exit_agreement.h"
#include "common/duration.h"
#include "engine/run_engine.h"
#include "outputs/console_report.h"
#include "outputs/qp_results.h"
#include "outputs/results_files.h"
#include "runner/data_plane_choice.h"
#include "runner/emulator_processes.h"
#include "runner/exit_codes.h"
#include "runner/repeated_run.h"
#include "runner/results_lock.h"
#include "runner/run_outputs.h"
#include "runner/split_run_results.h"
#include "runner/stop_signals.h"
#include "trace/trace_error.h"

namespace etwire::runner {

namespace {

int exit_code_for(engine::RunStatus status) {
  switch (status) {
    case engine::RunStatus::kCompleted:
      return kExitOk;
    case engine::RunStatus::kStuck:
      return kExitStuck;
    case engine::RunStatus::kInterrupted:
      return kExitInterrupted;
    case engine::RunStatus::kFlowsFailed:
    case engine::RunStatus::kFailed:
      return kExitFailure;
  }
  return kExitFailure;
}

// Writes summary.json, collectives.csv and qps.csv (when the run's data plane counted QPs);
// returns false (after saying why) when one cannot be written. Each is tried, whatever became of
// the others: each is whole or not there.
bool write_results(const engine::RunResults& results, const std::filesystem::path& out,
                   const config::RecordConfig& record) {
  bool written = true;
  const auto write = [&](const char* name, auto&& writer) {
    const std::string path = (out / name).string();
    try {
      writer(results, path);
      spdlog::debug("wrote {}", path);
    } catch (const std::exception& e) {
      std::cerr << fmt::format("error: {}\n", e.what());
      written = false;
    }
  };
  write("summary.json", outputs::write_summary_json);
  if (record.collectives) write("collectives.csv", outputs::write_collectives_csv);
  if (record.qps && results.qps_counted) write("qps.csv", outputs::write_qps_csv);
  return written;
}

}  // namespace

ConfiguredRun::ConfiguredRun(RunRequest request) : request_(std::move(request)) {}

ConfiguredRun::~ConfiguredRun() = default;

int ConfiguredRun::agree() {
  if (!request_.watchdog.empty()) {
    auto parsed = etwire::parse_duration_ns(request_.watchdog);
    if (!parsed || *parsed == 0) {
      std::cerr << fmt::format(
          "error: --watchdog {}: expected a positive duration such as "
          "500ms or 10s\n",
          request_.watchdog);
      return kExitBadInput;
    }
    watchdog_ns_ = static_cast<clock::Nanos>(*parsed);
  }
  loaded_ = request_.plan;
  if (!loaded_) {
    control::LoadOptions load_options;
    load_options.overrides = request_.overrides;
    loaded_ = std::make_shared<const control::RunPlan>(
        control::load_config_file(request_.config, load_options));
  }
  const control::RunPlan& loaded = *loaded_;
  // Under an MPI launcher the processes also agree on what they loaded and measure their clocks.
  const cluster::Session& session = cluster::Session::current();
  if (const int code =
          settle_loaded_config(session, request_.config, loaded, loaded.ok() && loaded.addresses,
                               fmt::format("{}: invalid: {} error{}; nothing was run",
                                           request_.config, loaded.diagnostics.error_count(),
                                           loaded.diagnostics.error_count() == 1 ? "" : "s"),
                               &offsets_);
      code != kExitOk) {
    return code;
  }
  // Split between emulator processes, process 0 writes the results of all; a twin spread over
  // processes runs the whole engine in each, and process 0 writes its results.
  twin_spread_ = twin_spread_over(loaded.config, session.size());
  split_ = session.size() > 1 && !twin_spread_;
  writes_results_ = session.rank() == 0;
  return kExitOk;
}

int ConfiguredRun::set_up() {
  const cluster::Session& session = cluster::Session::current();
  const config::RunConfig& config = loaded_->config;
  // Spread over processes, every engine stops after the same window (the data plane agrees).
  options_.stop = twin_spread_ ? &agreed_stop_ : &stop_requested();
  options_.watchdog_ns = watchdog_ns_;
  options_.time_scale = request_.time_scale;
  // The engines of a spread twin are alike: process 0's shows the progress.
  if (!request_.no_progress && (!twin_spread_ || writes_results_)) {
    // Split between processes, each sees only its own part of the instances: no total.
    progress_ = std::make_unique<RunProgress>(split_ ? 0 : expected_instances(*loaded_),
                                              isatty(STDERR_FILENO) != 0);
    options_.progress = RunProgress::report;
    options_.progress_context = progress_.get();
  }
  if (request_.threads > 0 && config.fabric.partitions <= 1) {
    std::cerr << fmt::format(
        "error: --threads {}: {} runs the fabric twin in one partition (fabric.partitions is 1), "
        "which one thread runs; threads run the partitions of a partitioned twin\n",
        request_.threads, request_.config);
    return kExitBadInput;
  }
  dataplane::SpreadOver spread;
  if (twin_spread_) spread = {&session, &stop_requested(), &agreed_stop_};
  options_.data_plane = data_plane_factory(*loaded_, request_.threads, spread);
  // A spread twin's engine is the whole run's in every process.
  options_.session = twin_spread_ ? nullptr : &session;
  if (const int code = set_up_every_process(
          session, config,
          [&] { engine_ = std::make_unique<engine::RunEngine>(*loaded_, options_); });
      code != kExitOk) {
    return code;
  }
  log_ports_set_up(config);
  outputs_ = std::make_unique<RunOutputs>();
  return kExitOk;
}

// Telemetry, the results directory and the frame capture. Returns kExitOk when this process can
// start.
int ConfiguredRun::open_outputs() {
  const cluster::Session& session = cluster::Session::current();
  const config::RunConfig& config = loaded_->config;
  // Telemetry when metrics are served or pushed. The endpoint binds before anything is written:
  // an address in use stops the run here. Each emulator process serves its own metrics;
  // processes sharing a host take the ports after the configured one, in MPI rank order (port 0:
  // each a free one).
  config::MetricsEndpoint metrics = config.telemetry.metrics;
  const int before_on_host = processes_before_on_host(session);
  if (metrics.port != 0) metrics.port = static_cast<uint16_t>(metrics.port + before_on_host);
  // The engines of a spread twin are alike: process 0 serves or pushes the metrics.
  const bool serves = !twin_spread_ || writes_results_;
  if (!request_.no_metrics && serves && (metrics.enabled || !metrics.pushgateway.empty())) {
    try {
      outputs_->open_telemetry(*engine_, metrics);
    } catch (const telemetry::EndpointError& e) {
      std::cerr << fmt::format("error: {}\n", e.what());
      return kExitBadInput;
    }
  }
  // Only a run that can start creates its results directory.
  out_ = std::filesystem::path(request_.out.empty() ? config.telemetry.output_dir : request_.out);
  if (writes_results_) {
    if (const int code = check_results_kind(out_, false); code != kExitOk) return code;
    if (const int code = hold_results_directory(out_, out_lock_); code != kExitOk) return code;
  }
  // Frames are captured where the results go (process 0 of a split run captures its own ports).
  if (config.telemetry.record.pcap && writes_results_) {
    try {
      engine_->capture_frames(out_.string());
    } catch (const std::runtime_error& e) {
      std::cerr << fmt::format("error: {}\n", e.what());
      return kExitFailure;
    }
  }
  return kExitOk;
}

int ConfiguredRun::start() {
  const cluster::Session& session = cluster::Session::current();
  const config::RunConfig& config = loaded_->config;
  // Split between processes, none starts unless all can.
  if (const int code = cluster::agree_on_exit_code(session, open_outputs()); code != kExitOk) {
    return code;
  }
  outputs_->open_files(*engine_, config.telemetry.record, out_, writes_results_, split_);
  std::string serving;
  if (const auto* telemetry = outputs_->telemetry(); telemetry && telemetry->server()) {
    serving = "; metrics at " + telemetry->server()->url();
  }
  if (writes_results_ && !request_.quiet) {
    std::cerr << fmt::format(
        "running {}: {} job{}, {} ranks on {} ports{}; results in {}{}\n", config.run.name,
        config.workload.jobs.size(), config.workload.jobs.size() == 1 ? "" : "s",
        engine_->results().world_size, config.ports.size(),
        split_         ? fmt::format(" across {} emulator processes", session.size())
        : twin_spread_ ? fmt::format(", the fabric twin's {} partitions spread over {} processes",
                                     config.fabric.partitions, session.size())
                       : "",
        out_.string(), serving);
  }
  // Said before the first packet (a DCQCN setting that differs, a rate limit the RNIC refused),
  // and again in the summary.
  if (!request_.quiet) {
    for (const std::string& note : engine_->setup_notes()) {
      std::cerr << fmt::format("note: {}\n", note);
    }
  }
  return kExitOk;
}

int ConfiguredRun::run() {
  try {
    engine_->run();
  } catch (const trace::TraceError& e) {
    std::cerr << fmt::format("\nerror: {}\n", e.what());
    trace_error_ = kExitBadInput;
  } catch (const std::invalid_argument& e) {
    // Traffic the ports cannot carry (back-to-back cabling that does not join two ranks).
    std::cerr << fmt::format("\nerror: {}\n", e.what());
    trace_error_ = kExitBadInput;
  } catch (const std::runtime_error& e) {
    // A device that failed during the run: the results so far are final and still written.
    std::cerr << fmt::format("\nerror: {}\n", e.what());
    trace_error_ = kExitFailure;
  }
  // The end of the line a terminal's progress rewrites.
  if (progress_ && progress_->terminal()) std::cerr << "\n";
  return kExitOk;
}

int ConfiguredRun::gather() {
  const cluster::Session& session = cluster::Session::current();
  if (split_ && stop_requested().load(std::memory_order_relaxed)) {
    // The launcher is ending the run (a signal; another process died): the processes cannot
    // meet again, so each keeps what it has, in its own files, and all end together.
    outputs_->finish_telemetry();
    const int code =
        keep_own_part(session, loaded_->config, *engine_, out_, outputs_->split_flows(),
                      [&](const engine::RunResults& part) { return report(part); });
    session.abort(code == kExitOk ? kExitInterrupted : code);
  }
  int code = kExitOk;
  if (split_) {
    try {
      const FlowRecordBuffer* mine = outputs_->split_flows();
      gathered_ = gather_split_results(session, *engine_, offsets_,
                                       mine != nullptr ? *mine : FlowRecordBuffer());
      if (gathered_) outputs_->rewrite_flows(gathered_->flows);
    } catch (const std::exception& e) {
      std::cerr << fmt::format("error: {}\n", e.what());
      code = kExitFailure;
    }
  }
  if (const std::string warning = outputs_->finish_telemetry(); !warning.empty()) {
    std::cerr << fmt::format("warning: {}\n", warning);
  }
  return code;
}

int ConfiguredRun::write() {
  if (!writes_results_) return kExitOk;
  return report(gathered_ ? gathered_->results : engine_->results());
}

// Writes the result files and the report (process 0 of a split run); returns the exit code.
int ConfiguredRun::report(const engine::RunResults& results) {
  bool written = write_results(results, out_, loaded_->config.telemetry.record);
  if (!outputs_->close_files()) written = false;
  if (!written) return kExitFailure;
  if (request_.on_results) request_.on_results(results);
  if (!request_.quiet) std::cout << outputs::console_report(results) << std::flush;
  outputs_->linger();
  if (trace_error_ != 0) return trace_error_;
  if (results.status == engine::RunStatus::kStuck) {
    std::string diagnosis = results.diagnosis;
    if (!diagnosis.empty() && diagnosis.back() != '\n') diagnosis += '\n';
    std::cerr << fmt::format("error: the run stopped before it could complete:\n{}", diagnosis);
  }
  if (results.status == engine::RunStatus::kFlowsFailed) {
    // Exit 1 says little on its own; the report on stdout may go elsewhere.
    std::cerr << fmt::format("error: {} of {} flows failed{}\n", results.failed_flows,
                             results.flows, outputs::failed_flows_by_status(results));
  }
  return exit_code_for(results.status);
}

int ConfiguredRun::release(int code) {
  const cluster::Session& session = cluster::Session::current();
  if (session.size() <= 1) return code;
  // Process 0 reports the run; every process ends with its exit code, as mpirun expects.
  code = cluster::exit_code_of_process_zero(session, code);
  release_every_process(session, loaded_->config, [&] { engine_.reset(); });
  return code;
}

int run_configuration(const RunRequest& request) {
  ConfiguredRun run(request);
  if (const int code = run.agree(); code != kExitOk) return code;
  if (const int code = run.set_up(); code != kExitOk) return code;
  if (const int code = run.start(); code != kExitOk) return code;
  run.run();
  if (const int code = run.gather(); code != kExitOk) return run.release(code);
  return run.release(run.write());
}

bool stop_was_requested() {
  return stop_requested().load(std::memory_order_relaxed);
}

}  // namespace etwire::runner

#include "cli/configured_run.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "cli/data_plane_choice.h"
#include "cli/emulator_processes.h"
#include "cli/exit_codes.h"
#include "cli/split_run_results.h"
#include "cli/stop_signals.h"
#include "common/duration.h"
#include "engine/config_digest.h"
#include "engine/run_engine.h"
#include "outputs/console_report.h"
#include "outputs/port_csv_writer.h"
#include "outputs/qp_results.h"
#include "outputs/results_files.h"
#include "outputs/telemetry/run_telemetry.h"
#include "trace/trace_error.h"

namespace etwire::cli {

namespace {

void print_progress(const engine::RunResults& so_far, clock::Nanos now, void*) {
  std::cerr << fmt::format("\r  virtual {:.3f} ms | collectives done {} | flows {} ", now / 1e6,
                           so_far.collectives.size(), so_far.flows)
            << std::flush;
}

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

// Keeps the metrics endpoint up for `linger` after the run so Prometheus scrapes the final
// values; a stop request (Ctrl-C) ends it early.
void linger(const telemetry::RunTelemetry& telemetry) {
  const auto* server = telemetry.server();
  if (server == nullptr || telemetry.linger().count() == 0) return;
  std::cerr << fmt::format("serving the final metrics at {} for {:.1f} s more (Ctrl-C ends it)\n",
                           server->url(),
                           std::chrono::duration<double>(telemetry.linger()).count());
  const auto until = std::chrono::steady_clock::now() + telemetry.linger();
  while (!stop_requested().load(std::memory_order_relaxed) &&
         std::chrono::steady_clock::now() < until) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

// The overrides, and the substitute trace set by the name it has in its directory, so that the
// runs of a sweep tell their points apart wherever the sweep wrote them.
std::vector<std::string> digested_settings(const RunRequest& request) {
  std::vector<std::string> settings = request.overrides;
  if (const auto& substitute = request.substitute_job) {
    const std::filesystem::path trace(substitute->trace);
    settings.push_back(fmt::format(
        "substitute_job: {}/{} x {} + {} warm-up", trace.parent_path().filename().string(),
        trace.filename().string(), substitute->iterations, substitute->warmup_iterations));
  }
  return settings;
}

}  // namespace

int run_configuration(const RunRequest& request) {
  clock::Nanos watchdog_ns = 0;
  if (!request.watchdog.empty()) {
    auto parsed = etwire::parse_duration_ns(request.watchdog);
    if (!parsed || *parsed == 0) {
      std::cerr << fmt::format(
          "error: --watchdog {}: expected a positive duration such as "
          "500ms or 10s\n",
          request.watchdog);
      return kExitBadInput;
    }
    watchdog_ns = static_cast<clock::Nanos>(*parsed);
  }
  control::LoadOptions load_options;
  load_options.overrides = request.overrides;
  load_options.substitute_job = request.substitute_job;
  auto loaded = control::load_config_file(request.config, load_options);
  // Under an MPI launcher the processes also agree on what they loaded and measure their clocks.
  const cluster::Session& session = cluster::Session::current();
  std::vector<cluster::ClockOffset> offsets;
  if (const int code = settle_loaded_config(
          session, request.config, request.overrides, loaded, loaded.ok() && loaded.addresses,
          fmt::format("{}: invalid: {} error{}; nothing was run", request.config,
                      loaded.diagnostics.error_count(),
                      loaded.diagnostics.error_count() == 1 ? "" : "s"),
          &offsets);
      code != kExitOk) {
    return code;
  }
  // Split between emulator processes, process 0 writes the results of all.
  const bool split = session.size() > 1;
  const bool writes_results = session.rank() == 0;
  const config::RunConfig& config = loaded.config;
  engine::RunOptions options;
  options.stop = &stop_requested();
  options.watchdog_ns = watchdog_ns;
  options.time_scale = request.time_scale;
  options.config_digest = engine::config_digest(loaded.text, digested_settings(request));
  if (!request.no_progress && isatty(STDERR_FILENO)) options.progress = print_progress;
  if (request.threads > 0 && config.fabric.partitions <= 1) {
    std::cerr << fmt::format(
        "error: --threads {}: {} runs the fabric twin in one partition (fabric.partitions is 1), "
        "which one thread runs; threads run the partitions of a partitioned twin\n",
        request.threads, request.config);
    return kExitBadInput;
  }
  options.data_plane = data_plane_factory(config, request.threads);
  options.session = &session;

  std::unique_ptr<engine::RunEngine> engine;
  if (const int code = set_up_every_process(
          session, config, [&] { engine = std::make_unique<engine::RunEngine>(loaded, options); });
      code != kExitOk) {
    return code;
  }
  log_ports_set_up(config);
  // Telemetry when metrics are served or pushed. The endpoint binds before anything is written:
  // an address in use stops the run here.
  std::optional<telemetry::RunTelemetry> telemetry;
  // Each emulator process serves its own metrics; processes sharing a host take the ports after
  // the configured one, in MPI rank order (port 0: each a free one).
  config::MetricsEndpoint metrics = config.telemetry.metrics;
  const int before_on_host = processes_before_on_host(session);
  if (metrics.port != 0) metrics.port = static_cast<uint16_t>(metrics.port + before_on_host);
  int ready = kExitOk;
  if (!request.no_metrics && (metrics.enabled || !metrics.pushgateway.empty())) {
    try {
      telemetry.emplace(engine->metric_labels(), metrics);
      engine->set_telemetry(&telemetry->ring());
    } catch (const telemetry::EndpointError& e) {
      std::cerr << fmt::format("error: {}\n", e.what());
      ready = kExitBadInput;
    }
  }
  // Only a run that can start creates its results directory.
  const std::filesystem::path out =
      std::filesystem::path(request.out.empty() ? config.telemetry.output_dir : request.out);
  std::error_code error;
  if (writes_results && ready == kExitOk) std::filesystem::create_directories(out, error);
  if (error) {
    std::cerr << fmt::format("error: {}: cannot create the results directory: {}\n", out.string(),
                             error.message());
    ready = kExitFailure;
  }
  // Frames are captured where the results go (process 0 of a split run captures its own ports).
  if (config.telemetry.record.pcap && writes_results && ready == kExitOk) {
    try {
      engine->capture_frames(out.string());
    } catch (const std::runtime_error& e) {
      std::cerr << fmt::format("error: {}\n", e.what());
      ready = kExitFailure;
    }
  }
  // Split between processes, none starts unless all can.
  if (const int code = agree_to_start(session, ready); code != kExitOk) return code;

  std::optional<outputs::FlowCsvWriter> flows;
  // Split between processes, each keeps its flow records for process 0, which also writes its
  // own as they finish, and rewrites the file with everyone's at the end.
  std::optional<FlowRecordBuffer> split_flows;
  const std::string flows_path = (out / "flows.csv").string();
  if (config.telemetry.record.flows) {
    if (writes_results) flows.emplace(flows_path);
    if (split) split_flows.emplace(flows ? &*flows : nullptr);
    engine->set_flow_writer(split ? static_cast<engine::FlowSink*>(&*split_flows) : &*flows);
  } else {
    engine->set_flow_writer(nullptr);
  }
  // Samples of the twin's queues (loopback runs only: validate refuses the key elsewhere).
  std::optional<outputs::QueueCsvWriter> queues;
  if (config.telemetry.record.queue_sample_interval_ns > 0 && writes_results) {
    queues.emplace((out / "queues.csv").string());
    engine->set_queue_writer(&*queues);
  }
  // The port counters over time, on the data plane's clock: on unless the interval is set to 0.
  std::optional<outputs::PortCsvWriter> ports;
  const auto& port_interval = config.telemetry.record.port_sample_interval_ns;
  if ((!port_interval || *port_interval > 0) && writes_results) {
    ports.emplace((out / "ports.csv").string());
    engine->set_port_writer(&*ports);
  }

  std::string serving;
  if (telemetry && telemetry->server()) serving = "; metrics at " + telemetry->server()->url();
  if (writes_results && !request.quiet) {
    std::cerr << fmt::format(
        "running {}: {} job{}, {} ranks on {} ports{}; results in {}{}\n", config.run.name,
        config.workload.jobs.size(), config.workload.jobs.size() == 1 ? "" : "s",
        engine->results().world_size, config.ports.size(),
        split ? fmt::format(" across {} emulator processes", session.size()) : "", out.string(),
        serving);
  }
  // Said before the first packet (a DCQCN setting that differs, a rate limit the RNIC refused),
  // and again in the summary.
  if (!request.quiet) {
    for (const std::string& note : engine->setup_notes()) {
      std::cerr << fmt::format("note: {}\n", note);
    }
  }
  int trace_error = 0;
  try {
    engine->run();
  } catch (const trace::TraceError& e) {
    std::cerr << fmt::format("\nerror: {}\n", e.what());
    trace_error = kExitBadInput;
  } catch (const std::invalid_argument& e) {
    // Traffic the ports cannot carry (back-to-back cabling that does not join two ranks).
    std::cerr << fmt::format("\nerror: {}\n", e.what());
    trace_error = kExitBadInput;
  } catch (const std::runtime_error& e) {
    // A device that failed during the run: the results so far are final and still written.
    std::cerr << fmt::format("\nerror: {}\n", e.what());
    trace_error = kExitFailure;
  }
  if (options.progress) std::cerr << "\n";
  // Writes the result files and the report (process 0 of a split run); returns the exit code.
  const auto report = [&](const engine::RunResults& results) -> int {
    bool written = write_results(results, out, config.telemetry.record);
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
    close(flows);
    close(queues);
    close(ports);
    if (!written) return kExitFailure;
    if (request.on_results) request.on_results(results);
    if (!request.quiet) std::cout << outputs::console_report(results) << std::flush;
    if (telemetry) linger(*telemetry);
    if (trace_error != 0) return trace_error;
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
  };
  if (split && stop_requested().load(std::memory_order_relaxed)) {
    // The launcher is ending the run (a signal; another process died): the processes cannot
    // meet again, so each keeps what it has, in its own files, and all end together.
    if (telemetry) telemetry->finish();
    const int code =
        keep_own_part(session, config, *engine, out, split_flows ? &*split_flows : nullptr,
                      [&](const engine::RunResults& part) { return report(part); });
    session.abort(code == kExitOk ? kExitInterrupted : code);
  }
  std::optional<SplitRunResults> gathered;
  std::string gather_error;
  if (split) {
    try {
      gathered = gather_split_results(session, *engine, offsets,
                                      split_flows ? *split_flows : FlowRecordBuffer());
      if (gathered && flows) {
        flows->close();
        flows.emplace(flows_path);
        for (const transport::FlowRecord& record : gathered->flows) flows->append(record);
      }
    } catch (const std::exception& e) {
      gather_error = e.what();
    }
  }
  if (telemetry) {
    telemetry->finish();
    if (std::string error = telemetry->push(); !error.empty()) {
      std::cerr << fmt::format("warning: {}; the results files have everything\n", error);
    }
  }
  int code = kExitOk;
  if (!gather_error.empty()) {
    std::cerr << fmt::format("error: {}\n", gather_error);
    code = kExitFailure;
  } else if (writes_results) {
    code = report(gathered ? gathered->results : engine->results());
  }
  if (split) {
    // Process 0 reports the run; every process ends with its exit code, as mpirun expects.
    code = std::stoi(session.all_gather(std::to_string(code))[0]);
    release_every_process(session, config, [&] { engine.reset(); });
  }
  return code;
}

bool stop_was_requested() {
  return stop_requested().load(std::memory_order_relaxed);
}

}  // namespace etwire::cli

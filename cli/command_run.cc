// `etwire run`: replays a configuration's jobs on the data plane and writes the results:
// summary.json, collectives.csv, flows.csv and qps.csv in the output directory, and the
// nccl-tests-style report on stdout. Serves Prometheus metrics while it runs (and for
// telemetry.metrics.linger after), and pushes them to a Pushgateway at the end when one is
// configured.
#include <fmt/format.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <iostream>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "cli/commands.h"
#include "cli/data_plane_choice.h"
#include "cli/emulator_processes.h"
#include "cli/exit_codes.h"
#include "cli/split_run_results.h"
#include "cli/stop_signals.h"
#include "common/duration.h"
#include "control/load/config_loader.h"
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

struct RunCommandOptions {
  std::string config;
  std::vector<std::string> overrides;
  std::string out;
  std::string watchdog;
  std::optional<double> time_scale;
  bool no_progress = false;
  bool no_metrics = false;
  bool predict = false;
};

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

// One run of the configuration as `opts` give it: load, set up, replay, write the results.
int run_configuration(const RunCommandOptions* opts) {
  clock::Nanos watchdog_ns = 0;
  if (!opts->watchdog.empty()) {
    auto parsed = etwire::parse_duration_ns(opts->watchdog);
    if (!parsed || *parsed == 0) {
      std::cerr << fmt::format(
          "error: --watchdog {}: expected a positive duration such as "
          "500ms or 10s\n",
          opts->watchdog);
      return kExitBadInput;
    }
    watchdog_ns = static_cast<clock::Nanos>(*parsed);
  }
  control::LoadOptions load_options;
  load_options.overrides = opts->overrides;
  auto loaded = control::load_config_file(opts->config, load_options);
  // Under an MPI launcher the processes also agree on what they loaded and measure their clocks.
  const cluster::Session& session = cluster::Session::current();
  std::vector<cluster::ClockOffset> offsets;
  if (const int code = settle_loaded_config(
          session, opts->config, opts->overrides, loaded, loaded.ok() && loaded.addresses,
          fmt::format("{}: invalid: {} error{}; nothing was run", opts->config,
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
  options.time_scale = opts->time_scale;
  options.config_digest = engine::config_digest(loaded.text, opts->overrides);
  if (!opts->no_progress && isatty(STDERR_FILENO)) options.progress = print_progress;
  options.data_plane = data_plane_factory(config);
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
  if (!opts->no_metrics && (metrics.enabled || !metrics.pushgateway.empty())) {
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
      std::filesystem::path(opts->out.empty() ? config.telemetry.output_dir : opts->out);
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
  if (writes_results) {
    std::cerr << fmt::format(
        "running {}: {} job{}, {} ranks on {} ports{}; results in {}{}\n", config.run.name,
        config.workload.jobs.size(), config.workload.jobs.size() == 1 ? "" : "s",
        engine->results().world_size, config.ports.size(),
        split ? fmt::format(" across {} emulator processes", session.size()) : "", out.string(),
        serving);
  }
  // Said before the first packet (a DCQCN setting that differs, a rate limit the RNIC refused),
  // and again in the summary.
  for (const std::string& note : engine->setup_notes()) {
    std::cerr << fmt::format("note: {}\n", note);
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
    std::cout << outputs::console_report(results) << std::flush;
    if (telemetry) linger(*telemetry);
    if (trace_error != 0) return trace_error;
    if (results.status == engine::RunStatus::kStuck) {
      std::string diagnosis = results.diagnosis;
      if (!diagnosis.empty() && diagnosis.back() != '\n') diagnosis += '\n';
      std::cerr << fmt::format("error: the run stopped before it could complete:\n{}", diagnosis);
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

// `run --predict`: the same configuration on the fabric twin first, its ports turned into
// loopback ports of the same speeds on the twin its `fabric` section describes (the device under
// test), into <results>/prediction/; then the run on the configured ports into <results>.
int run_with_prediction(const RunCommandOptions& opts) {
  if (cluster::Session::current().size() > 1) {
    std::cerr << "error: --predict is not built for a run split between emulator processes; run "
                 "the prediction on its own, with --set ports[N].backend=loopback for each port "
                 "entry\n";
    return kExitBadInput;
  }
  control::LoadOptions load_options;
  load_options.overrides = opts.overrides;
  const control::LoadedConfig lab = control::load_config_file(opts.config, load_options);
  RunCommandOptions measured = opts;
  measured.predict = false;
  // An invalid configuration is reported as a run reports it.
  if (!lab.ok()) return run_configuration(&measured);
  RunCommandOptions prediction = measured;
  prediction.no_metrics = true;
  std::set<std::string> entries;  // port entries of the configuration, not on the twin already
  for (const config::PortConfig& port : lab.config.ports) {
    if (port.backend != config::Backend::kLoopback) entries.insert(port.key_path);
  }
  if (entries.empty()) {
    std::cerr << fmt::format(
        "error: {}: --predict: every port is a loopback port already, so the run is the fabric "
        "twin's prediction; leave --predict out\n",
        opts.config);
    return kExitBadInput;
  }
  for (const std::string& entry : entries)
    prediction.overrides.push_back(entry + ".backend=loopback");
  // The twin's frames are not the lab's: capture belongs to the measurement.
  prediction.overrides.push_back("telemetry.record.pcap=false");
  const std::filesystem::path out =
      std::filesystem::path(opts.out.empty() ? lab.config.telemetry.output_dir : opts.out);
  prediction.out = (out / "prediction").string();
  std::cout << fmt::format("Prediction: the fabric twin ({}) in place of the device under test\n",
                           config::topology_name(lab.config.fabric.topology));
  const int predicted = run_configuration(&prediction);
  if (stop_requested().load(std::memory_order_relaxed) ||
      (predicted != kExitOk && predicted != kExitFailure)) {
    std::cerr << fmt::format(
        "error: the prediction ended with exit code {}; nothing was measured\n", predicted);
    return predicted == kExitOk ? kExitInterrupted : predicted;
  }
  std::cout << "\nMeasurement: the configured ports\n";
  const int code = run_configuration(&measured);
  std::cerr << fmt::format(
      "prediction in {}, measurement in {}: etwire compare {} {} sets them side by side\n",
      prediction.out, out.string(), prediction.out, out.string());
  return code;
}

}  // namespace

CommandAction add_run_command(CLI::App& app) {
  auto opts = std::make_shared<RunCommandOptions>();
  auto* cmd = app.add_subcommand(
      "run",
      "Replay every job of a run configuration on its ports (loopback ports: the fabric twin, in "
      "virtual time) and record flow and collective completion times, bandwidth and congestion "
      "counters. Writes summary.json, collectives.csv, flows.csv and qps.csv to the output "
      "directory and prints an nccl-tests-style report. Exit 0 when every job completed, 1 when "
      "flows failed, 2 for bad input, 3 when the run could not complete (nothing progressed, or "
      "the ranks' traces disagree; the diagnosis says what was stuck), 130 when interrupted "
      "(SIGINT, SIGTERM or SIGHUP; one inherited as ignored stays ignored).");
  cmd->add_option("config", opts->config, "The run configuration (YAML)")->required();
  cmd->add_option("-s,--set", opts->overrides,
                  "Override a key: KEY.PATH=VALUE, e.g. workload.iterations=10 (repeatable)")
      ->allow_extra_args(false);
  cmd->add_option("-o,--out", opts->out,
                  "Results directory (default: telemetry.output_dir of the configuration)");
  cmd->add_option("--watchdog", opts->watchdog,
                  "Stop with a diagnosis after this long without progress, in virtual time "
                  "(e.g. 500ms; default: run.watchdog of the configuration)");
  cmd->add_option("--time-scale", opts->time_scale,
                  "Virtual seconds replayed per wall-clock second: 1 = real time, 0.001 = a "
                  "thousand times slower, to watch a short run live (default: run.time_scale of "
                  "the configuration; 0 = as fast as possible)")
      ->check(CLI::Range(0.0, 1e6));
  cmd->add_flag("--no-metrics", opts->no_metrics,
                "Neither serve Prometheus metrics nor push them (telemetry.metrics is ignored)");
  cmd->add_flag("--no-progress", opts->no_progress, "No progress line on a terminal");
  cmd->add_flag("--predict", opts->predict,
                "First run the same configuration on the fabric twin, its ports made loopback "
                "ports of the same speeds on the twin the fabric section describes (the device "
                "under test), into <results>/prediction; then run on the configured ports into "
                "<results>");
  return [opts]() -> int {
    if (!opts->predict) return run_configuration(opts.get());
    return run_with_prediction(*opts);
  };
}

}  // namespace etwire::cli

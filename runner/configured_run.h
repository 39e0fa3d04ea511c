// One run of a configuration as `etwire run` makes it, in phases: agree (load the configuration
// with its --set overrides; under an MPI launcher the processes agree on it and measure their
// clocks, emulator_processes.h), set up (the engine and its data plane, telemetry, the results
// directory), start (every process ready; the result writers), run, gather (a split run's parts
// to process 0), write (the results files and the report), release (the data plane, on every
// process in turn). `etwire run` makes one (two with --predict), `etwire sweep` one per
// collective, algorithm and size.
#pragma once

#include <atomic>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "control/resolve/config_loader.h"
#include "engine/run_engine.h"
#include "engine/run_results.h"
#include "runner/results_lock.h"
#include "runner/run_progress.h"
#include "runner/split_run_results.h"

namespace etwire::runner {

struct RunRequest {
  std::string config;
  std::vector<std::string> overrides;
  // The plan of the run, resolved already (a prediction, a point of a sweep: derived from one
  // plan): agree() takes it instead of reading `config` with `overrides`, which then only name it.
  std::shared_ptr<const control::RunPlan> plan;
  std::string out;       // the results directory; empty: telemetry.output_dir
  std::string watchdog;  // a duration; empty: run.watchdog
  std::optional<double> time_scale;
  // Threads that run the twin's partitions (fabric.partitions); 0: one per core.
  uint32_t threads = 0;
  bool no_progress = false;
  bool no_metrics = false;
  // The caller reports the run: neither the "running ..." line, the setup notes nor the console
  // report are printed (errors and the diagnosis of a stuck run still are).
  bool quiet = false;
  // Given the results once they are final and written (on process 0 of a split run).
  std::function<void(const engine::RunResults&)> on_results;
};

class RunOutputs;

// The phases of one run, each callable (and testable) on its own in this order. A phase returns
// kExitOk to go on, or the exit code the run ends with. A run that has not started (agree,
// set_up or start failed) ends there; one that ran is released whatever its code.
class ConfiguredRun {
 public:
  explicit ConfiguredRun(RunRequest request);
  ~ConfiguredRun();

  // Loads the configuration; under MPI the processes agree on it and measure their clocks.
  int agree();
  // The engine and its data plane, on every process in turn.
  int set_up();
  // Telemetry, the results directory, the frame capture and the result writers; every process
  // of a split run ready, or none starts.
  int start();
  // Replays every job; a trace or device error is kept for write() to report after the results.
  int run();
  // Split runs: every process's part to process 0. Interrupted, each process keeps its own part
  // in its own files and the run ends here for all (the launcher ends the processes).
  int gather();
  // The results files and the report (process 0); the run's exit code.
  int write();
  // Tears the data plane down on every process, in turns; under MPI every process then ends with
  // process 0's `code`. Returns the code to exit with.
  int release(int code);

  // After agree(): the plan of the run.
  const control::RunPlan& loaded() const { return *loaded_; }
  // After set_up(): the engine, and where the results go.
  engine::RunEngine* engine() { return engine_.get(); }
  const std::filesystem::path& out() const { return out_; }

 private:
  int open_outputs();
  int report(const engine::RunResults& results);

  RunRequest request_;
  clock::Nanos watchdog_ns_ = 0;
  std::shared_ptr<const control::RunPlan> loaded_;
  std::vector<cluster::ClockOffset> offsets_;
  bool split_ = false;  // between emulator processes
  // Under MPI: the partitioned twin spread over the processes (twin_spread_over), and the stop
  // they agree on, which the engine reads then.
  bool twin_spread_ = false;
  std::atomic<bool> agreed_stop_{false};
  bool writes_results_ = true;
  engine::RunOptions options_;
  std::unique_ptr<RunProgress> progress_;  // unless --no-progress
  std::unique_ptr<engine::RunEngine> engine_;
  std::unique_ptr<RunOutputs> outputs_;
  std::filesystem::path out_;
  ResultsLock out_lock_;  // held from start() until the run is destroyed
  int trace_error_ = 0;
  std::optional<SplitRunResults> gathered_;
};

// Runs every phase in order. Returns the exit code (exit_codes.h): 0 completed, 1 failed flows
// or results not written, 2 bad input, 3 stuck, 130 interrupted.
int run_configuration(const RunRequest& request);

// Whether SIGINT, SIGTERM or SIGHUP asked a run to stop (it stays set: the process is ending).
bool stop_was_requested();

}  // namespace etwire::runner

// One run of a configuration as `etwire run` makes it: load the configuration (with its --set
// overrides), set the data plane up, replay, write the results files and print the report.
// `etwire run` makes one (two with --predict), `etwire sweep` one per collective, algorithm and
// size. Under an MPI launcher the processes make it together (emulator_processes.h).
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "control/resolve/config_loader.h"
#include "engine/run_results.h"

namespace etwire::cli {

struct RunRequest {
  std::string config;
  std::vector<std::string> overrides;
  // A trace set replayed in place of the configuration's jobs (control::JobSubstitute).
  std::optional<control::JobSubstitute> substitute_job;
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

// Returns the exit code (exit_codes.h): 0 completed, 1 failed flows or results not written, 2 bad
// input, 3 stuck, 130 interrupted.
int run_configuration(const RunRequest& request);

// Whether SIGINT, SIGTERM or SIGHUP asked a run to stop (it stays set: the process is ending).
bool stop_was_requested();

}  // namespace etwire::cli

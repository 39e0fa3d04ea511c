// What the emulator processes of one run do together before anything starts, over MPI only:
// check that all loaded the same configuration and traces, that the configuration's emulators
// are these processes (as many as the launcher started, each on the host it names), wait for each
// other, and measure each clock's offset to process 0's. Outside MPI there is nothing to do.
#pragma once

#include <string>
#include <vector>

#include "cluster/session.h"
#include "control/load/config_loader.h"

namespace etwire::cli {

struct ProcessSetup {
  std::string config_file;
  std::vector<std::string> overrides;
  // The loaded configuration, or nullptr when this process could not load it (`error` says why):
  // it still takes part, so that the others stop with its reason instead of waiting for it.
  const control::LoadedConfig* loaded = nullptr;
  std::string error;
};

// Every process calls it with its own setup. Returns kExitOk, or the exit code every process
// stops with; process 0 prints why (and, on success, each process's clock offset).
int join_emulator_processes(const cluster::Session& session, const ProcessSetup& setup);

// What `validate` and `run` do with a configuration they loaded: print its diagnostics (under MPI
// only process 0, unless this process failed where the others may not have), and, when it is not
// `usable`, print `invalid` and exit 2; under MPI every process then joins the others
// (join_emulator_processes) either way. Returns kExitOk or the exit code.
int settle_loaded_config(const cluster::Session& session, const std::string& config_file,
                         const std::vector<std::string>& overrides,
                         const control::LoadedConfig& loaded, bool usable,
                         const std::string& invalid);

}  // namespace etwire::cli

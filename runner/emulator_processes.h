// What the emulator processes of one run do together before anything starts, over MPI only:
// check that all loaded the same configuration and traces, that the configuration's emulators
// are these processes (as many as the launcher started, each on the host it names), wait for each
// other, and measure each clock's offset to process 0's. Outside MPI there is nothing to do.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "cluster/session.h"
#include "control/resolve/config_loader.h"

namespace etwire::runner {

struct ProcessSetup {
  std::string config_file;
  // The loaded configuration, or nullptr when this process could not load it (`error` says why):
  // it still takes part, so that the others stop with its reason instead of waiting for it.
  const control::RunPlan* loaded = nullptr;
  std::string error;
};

// Every process calls it with its own setup. Returns kExitOk, or the exit code every process
// stops with; process 0 prints why (and, on success, each process's clock offset). `offsets`, when
// given, receives on process 0 each process's clock offset to process 0 (empty elsewhere).
int join_emulator_processes(const cluster::Session& session, const ProcessSetup& setup,
                            std::vector<cluster::ClockOffset>* offsets = nullptr);

// Whether `processes` (MPI processes, from a launcher) spread `config`'s partitioned fabric twin
// over them (fabric.partitions above 1, no emulators section) rather than split its ports between
// emulators: each runs the whole engine and its share of the partitions
// (dataplane/loopback/partitioned_data_plane.h).
bool twin_spread_over(const config::RunConfig& config, int processes);

// Why one process alone (no MPI launcher) cannot run `config`, whose device ports (DPDK, hardware
// verbs) are split between emulators: it would drive only the first emulator's and wait for the
// others' traffic. Empty when it can (software RNIC ports: one process holds them all on the
// twin). join_emulator_processes refuses with it outside MPI.
std::string launcher_needed(const config::RunConfig& config);

// What `validate` and `run` do with a configuration they loaded: print its diagnostics (under MPI
// only process 0, unless this process failed where the others may not have), and, when it is not
// `usable`, print `invalid` and exit 2; under MPI every process then joins the others
// (join_emulator_processes) either way. Returns kExitOk or the exit code.
int settle_loaded_config(const cluster::Session& session, const std::string& config_file,
                         const control::RunPlan& loaded, bool usable, const std::string& invalid,
                         std::vector<cluster::ClockOffset>* offsets = nullptr);

// Runs `setup` (set_up: building the engine and its data plane) on every process, in turns where
// devices need it: a process whose ports are net_memif clients goes after the others, whose
// servers must listen first. Every process learns whether all succeeded; returns kExitOk, or the
// exit code every process stops with (each process printed its own error; process 0 names the
// processes that failed).
int set_up_every_process(const cluster::Session& session, const config::RunConfig& config,
                         const std::function<void()>& setup);

// Runs `release` (tearing a data plane down) on every process, in turns as set_up_every_process
// set them up: the processes of net_memif servers first, then the others. Collective.
void release_every_process(const cluster::Session& session, const config::RunConfig& config,
                           const std::function<void()>& release);

// How many processes of lower MPI rank run on this process's host (0 outside MPI).
int processes_before_on_host(const cluster::Session& session);

}  // namespace etwire::runner

// The whole run configuration as plain structs, every default applied. Later subsystems (the run
// engine, transport, fabric twin, backends, telemetry) read these; nothing here exposes YAML.
// docs/configuration.md describes every key.
#pragma once

#include <string>
#include <vector>

#include "config/collectives_config.h"
#include "config/emulator_config.h"
#include "config/fabric_config.h"
#include "config/mapping_config.h"
#include "config/port_config.h"
#include "config/run_settings.h"
#include "config/telemetry_config.h"
#include "config/transport_config.h"
#include "config/verbs_config.h"
#include "config/workload_config.h"

namespace etwire::config {

struct RunConfig {
  std::string source_file;  // the YAML file as given
  RunSettings run;
  WorkloadConfig workload;
  std::vector<PortConfig> ports;          // `count` entries expanded, in file order
  std::vector<EmulatorConfig> emulators;  // empty: one emulator, this process
  DpdkEalConfig dpdk;
  VerbsConfig verbs;
  MappingConfig mapping;
  CollectivesConfig collectives;
  TransportConfig transport;
  FabricConfig fabric;
  TelemetryConfig telemetry;

  const PortConfig* find_port(std::string_view name) const;
  const JobConfig* find_job(std::string_view name) const;
};

// Whether a port is cabled into the fabric twin: a loopback port, or a verbs port of the
// software RNIC in one process (split between emulator processes, the software RNIC cables its
// ports to the other processes' instead).
bool on_fabric_twin(const RunConfig& config, const PortConfig& port);

// Whether the emulator process of MPI rank `emulator` drives the port: always without an
// emulators section; otherwise when the port's emulator has that rank.
bool drives_port(const RunConfig& config, const PortConfig& port, uint32_t emulator);

}  // namespace etwire::config

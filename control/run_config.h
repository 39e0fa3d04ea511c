// The whole run configuration as plain structs, every default applied. Later subsystems (the run
// engine, transport, fabric twin, backends, telemetry) read these; nothing here exposes YAML.
// docs/configuration.md describes every key.
#pragma once

#include <string>
#include <vector>

#include "control/collectives_config.h"
#include "control/fabric_config.h"
#include "control/mapping_config.h"
#include "control/port_config.h"
#include "control/run_settings.h"
#include "control/telemetry_config.h"
#include "control/transport_config.h"
#include "control/workload_config.h"

namespace etwire::control {

struct RunConfig {
  std::string source_file;  // the YAML file as given
  RunSettings run;
  WorkloadConfig workload;
  std::vector<PortConfig> ports;  // `count` entries expanded, in file order
  DpdkEalConfig dpdk;
  MappingConfig mapping;
  CollectivesConfig collectives;
  TransportConfig transport;
  FabricConfig fabric;
  TelemetryConfig telemetry;

  const PortConfig* find_port(std::string_view name) const;
  const JobConfig* find_job(std::string_view name) const;
};

}  // namespace etwire::control

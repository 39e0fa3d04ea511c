// What loading a run configuration found: the configuration as far as it could be read, every
// problem located, and the facts derived from it (each job's trace set, its ranks' placement, the
// addresses). config_loader.h makes it; the plan and the reports read it.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "config/run_config.h"
#include "control/check/trace_facts.h"
#include "control/load/diagnostic.h"
#include "control/load/source_map.h"
#include "control/plan/addressing.h"
#include "control/plan/rank_mapping.h"

namespace etwire::control {

struct LoadedConfig {
  config::RunConfig config;  // as far as it could be read; defaults where it could not
  Diagnostics diagnostics;
  SourceMap source_map;
  std::vector<std::optional<TraceFacts>> traces;        // by job; when read
  std::vector<std::optional<JobPlacement>> placements;  // by job; when placed
  std::optional<AddressPlan> addresses;                 // when every job is placed
  // The configuration's bytes as they were read: a digest hashes these, since a second read of
  // the file may differ (edited since, a FIFO, a pipe) or block.
  std::string text;

  bool ok() const { return !diagnostics.has_errors(); }
};

}  // namespace etwire::control

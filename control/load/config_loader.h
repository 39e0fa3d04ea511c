// Loading a run configuration: read the YAML, apply --set overrides, read every section against
// the schema, fill in derived values, check the sections against each other, read each job's
// trace set to check it against the mapping, place every rank and assign its addresses. Every
// problem found is collected (not just the first), each located at file:line:col or at its --set
// argument. Nothing here throws for bad input.
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

struct LoadOptions {
  std::vector<std::string> overrides;  // "key.path=value", applied in order
  // Read each job's trace set: world size, process groups and the communication per rank. Off,
  // the checks that need the traces are skipped (and ranks are placed only for jobs that state
  // their world_size).
  bool read_traces = true;
};

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

LoadedConfig load_config_file(const std::string& path, const LoadOptions& options = {});
// `name` stands for the file in messages; relative paths in the text resolve against
// `config_dir`.
LoadedConfig load_config_text(const std::string& text, const std::string& name,
                              const std::string& config_dir, const LoadOptions& options = {});

// For callers that only want the plain structs: throws ConfigError carrying every error.
config::RunConfig load_run_config(const std::string& path, const LoadOptions& options = {});

}  // namespace etwire::control

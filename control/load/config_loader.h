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

// A trace set replayed in place of the configuration's workload (`etwire sweep`): the workload
// becomes one job, named and mapped as the configuration's first job, replaying `trace` for
// `warmup_iterations` and then `iterations` times; the other jobs and their mapping entries are
// left out, and so are the first job's world size, comm groups and filter.
struct JobSubstitute {
  std::string trace;  // the trace set, as workload.jobs[].trace takes it (absolute: as it is)
  uint32_t iterations = 1;
  uint32_t warmup_iterations = 0;
};

struct LoadOptions {
  std::vector<std::string> overrides;  // "key.path=value", applied in order
  // Read each job's trace set: world size, process groups and the communication per rank. Off,
  // the checks that need the traces are skipped (and ranks are placed only for jobs that state
  // their world_size).
  bool read_traces = true;
  // Applied after the overrides, so they may change the mapping it keeps.
  std::optional<JobSubstitute> substitute_job = std::nullopt;
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

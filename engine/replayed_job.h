// One job of a run as the engine replays it: what the plan says about it (its configuration,
// trace set and placement), where its ranks' runtimes are, the process groups its traces have
// named so far, and how far its iterations have come.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <utility>

#include "collectives/generate.h"
#include "config/run_config.h"
#include "control/plan/rank_mapping.h"
#include "engine/run_results.h"
#include "trace/trace_set.h"

namespace etwire::engine {

struct ReplayedJob {
  const config::JobConfig* config = nullptr;
  const trace::TraceSet* traces = nullptr;  // the plan's
  const control::JobPlacement* placement = nullptr;
  collectives::CollectiveSpec base_spec;
  uint32_t first_runtime = 0;  // the engine's runtimes[first_runtime + rank]
  int32_t world_size = 0;
  // Resolved process groups by pg_name (present or absent): key and members.
  std::map<std::pair<bool, std::string>, trace::NodeGroup> groups;
  // In-progress iterations: ranks that finished each, and their accounting.
  std::map<uint32_t, IterationRecord> iterations;
  std::map<uint32_t, uint32_t> ranks_finished_iteration;
  // Progress: iterations every rank finished, and nodes of the ranks' finished iterations.
  uint32_t iterations_completed = 0;
  uint64_t nodes_completed_before = 0;
};

}  // namespace etwire::engine

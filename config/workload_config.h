// `workload:` — which traces to replay (one job per trace set), how many times, and how.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "config/collective_algorithm.h"
#include "config/node_type.h"

namespace etwire::config {

enum class ReplayMode : uint8_t {
  kFull,      // compute nodes are delays of their recorded duration x compute_scale
  kCommOnly,  // compute and memory nodes take no time: only communication is replayed
};
std::string_view replay_mode_name(ReplayMode mode);  // "full", "comm-only"

// Partial replay: nodes a job replays. A node left out still completes at once so that its
// dependents run.
struct NodeFilterConfig {
  std::vector<NodeType> node_types;  // empty = every type
  uint64_t min_node_id = 0;          // inclusive range of node ids kept
  uint64_t max_node_id = UINT64_MAX;
  std::vector<std::string> process_groups;  // pg_name values kept; "" = absent; empty = all
  bool keeps_everything() const;
  bool operator==(const NodeFilterConfig&) const = default;
};

struct JobConfig {
  std::string name;      // unique; defaults to "job<i>"
  std::string key_path;  // "workload.jobs[0]", for messages that point back at the config
  // Trace set prefix (dir/name for dir/name.<rank>.et), directory or file. Paths in the file are
  // relative to the config file's directory; paths given with --set to the working directory.
  // Held resolved (as the loader would open it).
  std::string trace;
  std::string comm_groups;            // comm-group JSON, resolved like `trace`; "" = none
  std::optional<int32_t> world_size;  // expected number of ranks; checked against the files
  uint32_t iterations = 1;            // measured replays of the whole trace
  uint32_t warmup_iterations = 0;     // replays before the measured ones, not reported
  ReplayMode mode = ReplayMode::kFull;
  double compute_scale = 1.0;  // multiplies every compute duration (kFull only)
  NodeFilterConfig filter;
};

struct WorkloadConfig {
  std::vector<JobConfig> jobs;  // at least one
  // What comm_size counts where a rank's input and output differ in size (all-gather, gather,
  // reduce-scatter, scatter): each rank's input buffer (as the PyTorch converter and ASTRA-sim
  // record it) or its output buffer. Passed to the collective generator.
  SizeConvention comm_size = SizeConvention::kInput;
};

}  // namespace etwire::config

// `etwire synth model`: per-rank Chakra traces of transformer training steps under tensor,
// sequence, data (replicated or fully sharded), pipeline (1F1B) and expert parallelism, and the
// comm-group file they name. docs/synthetic-workloads.md gives the rules.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "trace/et_writer.h"
#include "trace/synth/model_costs.h"
#include "trace/synth/model_layout.h"
#include "trace/synth/model_spec.h"
#include "trace/synth/rank_trace_builder.h"

namespace etwire::synth {

struct ModelSummary {
  std::vector<std::string> paths;  // one per rank
  std::string comm_groups_path;
  std::vector<ModelGroup> groups;
  std::vector<RankOpStats> ranks;  // by rank, what each trace holds (all iterations)
  uint64_t micro_batches = 0;
  uint64_t params = 0;
  LayerCosts costs;
};

// "<prefix>.comm_groups.json".
std::string comm_groups_path(const std::string& prefix);

// Writes <prefix>.<rank>.et (or .et.gz / .json) for every rank and the comm-group file. Throws
// std::invalid_argument ("--flag: why") for a spec validate() rejects, std::runtime_error naming
// the file when one cannot be written.
ModelSummary write_model(const ModelSpec& spec, const std::string& prefix,
                         trace::WriteFormat format = trace::WriteFormat::kBinary);

}  // namespace etwire::synth

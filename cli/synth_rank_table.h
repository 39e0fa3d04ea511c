// The per-rank table `synth model` and `synth moe-mix` print: what each rank's trace holds, by
// operation type, with ranks whose traces hold the same counts and bytes on one row.
#pragma once

#include <string>
#include <vector>

#include "trace/synth/rank_trace_builder.h"

namespace etwire::cli {

std::string rank_ops_table(const std::vector<synth::RankOpStats>& ranks);

// "0-3,8,10-11" for ranks in ascending order.
std::string rank_ranges(const std::vector<int32_t>& ranks);

}  // namespace etwire::cli

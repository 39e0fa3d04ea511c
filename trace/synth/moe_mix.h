// `etwire synth moe-mix`: the workload of the Chakra paper's hardware-in-the-loop case study as
// one trace per rank: in every iteration, steps of compute each followed by an all-to-all on the
// critical path (the MoE layers' token exchange), with all-reduces (the gradient reduction)
// issued in between without blocking the compute. docs/synthetic-workloads.md describes it.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "trace/et_writer.h"
#include "trace/synth/model_spec.h"
#include "trace/synth/rank_trace_builder.h"

namespace etwire::synth {

struct MoeMixSpec {
  int32_t ranks = 16;
  uint64_t allreduce_bytes = 16ull << 20;
  uint64_t alltoall_bytes = 4ull << 20;
  uint32_t allreduces = 1;  // per iteration
  uint32_t alltoalls = 8;   // per iteration
  uint64_t compute_us = 100;
  uint32_t iterations = 1;
};

// Process groups of the traces: both hold every rank, as two communicators do in a framework
// (the data-parallel one and the expert-parallel one), so the two kinds of collective are
// ordered independently.
inline constexpr int64_t kMoeMixAllReduceGroup = 1;
inline constexpr int64_t kMoeMixAllToAllGroup = 2;

struct MoeMixSummary {
  std::vector<std::string> paths;
  std::string comm_groups_path;
  std::vector<RankOpStats> ranks;
};

// The flag at fault and why, for a spec that makes no sense; nullopt when it is valid.
std::optional<SpecProblem> validate(const MoeMixSpec& spec);

// Throws std::invalid_argument ("--flag: why") for a spec validate() rejects,
// std::runtime_error naming a file that cannot be written.
MoeMixSummary write_moe_mix(const MoeMixSpec& spec, const std::string& prefix,
                            trace::WriteFormat format = trace::WriteFormat::kBinary);

}  // namespace etwire::synth

// How the configuration turns one collective of a trace into a spec's algorithm and channels: the
// algorithm collectives.algorithms names for its type (under `auto`, the tuner's pick), else the
// hierarchical all-reduce where collectives.hierarchy reads its involved_dim as both dimensions and
// the job has hosts of several ranks, else the type's default; and collectives.channels where the
// algorithm takes channels, with collectives.graph's channels for the ring family; and the
// protocol, collectives.protocol's or, when `auto`, the tuner's for the collective over `links`.
// The run and the plan both call it, so they generate the same programs and put the same bytes on
// the wire.
#pragma once

#include <array>

#include "collectives/collective_spec.h"
#include "collectives/tuner.h"
#include "config/collectives_config.h"
#include "config/run_config.h"
#include "control/check/trace_facts.h"
#include "control/plan/rank_mapping.h"

namespace etwire::control {

struct CollectiveChoice {
  // The protocol chosen and, when the tuner weighed it, the model's times for the algorithm run.
  collectives::ProtocolChoice protocol;
  bool algorithm_tuned = false;
  // When the algorithm was tuned: per algorithm (by config::Algorithm) the model's smallest time
  // over the protocols it may run, in microseconds; negative: not a candidate.
  std::array<double, config::kAlgorithmCount> algorithm_time_us{};
};

// `spec` holds the collective, its group and ranks_per_host.
CollectiveChoice apply_collective_choices(const config::CollectivesConfig& config,
                                          DimensionScope scope,
                                          const collectives::TunerLinks& links,
                                          collectives::CollectiveSpec& spec);

// The links the tuner weighs for a collective of job `job` led by `rank`: the rank's port and its
// host's interconnect.
collectives::TunerLinks tuner_links(const config::RunConfig& config, size_t job,
                                    const JobPlacement& placement, int32_t rank);

}  // namespace etwire::control

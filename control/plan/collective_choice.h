// How the configuration turns one collective of a trace into a spec's algorithm and channels: the
// algorithm collectives.algorithms names for its type, else the hierarchical all-reduce where
// collectives.hierarchy reads its involved_dim as both dimensions and the job has hosts of
// several ranks, else the type's default; and collectives.channels where the algorithm takes
// channels, with collectives.graph's channels for the ring family; and the protocol,
// collectives.protocol's or, when `auto`, the tuner's for the collective over `links`. The run and
// the plan both call it, so they generate the same programs and put the same bytes on the wire.
#pragma once

#include "collectives/collective_spec.h"
#include "collectives/protocol_tuner.h"
#include "config/collectives_config.h"
#include "config/run_config.h"
#include "control/check/trace_facts.h"
#include "control/plan/rank_mapping.h"

namespace etwire::control {

// `spec` holds the collective, its group and ranks_per_host. Returns the protocol chosen and, when
// the tuner chose it, the model's times.
collectives::ProtocolChoice apply_collective_choices(const config::CollectivesConfig& config,
                                                     DimensionScope scope,
                                                     const collectives::TunerLinks& links,
                                                     collectives::CollectiveSpec& spec);

// The links the tuner weighs for a collective of job `job` led by `rank`: the rank's port and its
// host's interconnect.
collectives::TunerLinks tuner_links(const config::RunConfig& config, size_t job,
                                    const JobPlacement& placement, int32_t rank);

}  // namespace etwire::control

// How the configuration turns one collective of a trace into a spec's algorithm and channels: the
// algorithm collectives.algorithms names for its type, else the hierarchical all-reduce where
// collectives.hierarchy reads its involved_dim as both dimensions and the job has hosts of
// several ranks, else the type's default; and collectives.channels where the algorithm takes
// channels, with collectives.graph's channels for the ring family. The run and the plan both call
// it, so they generate the same programs.
#pragma once

#include "collectives/collective_spec.h"
#include "config/collectives_config.h"
#include "control/check/trace_facts.h"

namespace etwire::control {

// `spec` holds the collective, its group and ranks_per_host.
void apply_collective_choices(const config::CollectivesConfig& config, DimensionScope scope,
                              collectives::CollectiveSpec& spec);

}  // namespace etwire::control

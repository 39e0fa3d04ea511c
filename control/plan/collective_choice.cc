#include "control/plan/collective_choice.h"

namespace etwire::control {

void apply_collective_choices(const config::CollectivesConfig& config, DimensionScope scope,
                              collectives::CollectiveSpec& spec) {
  if (spec.collective) spec.algorithm = config.algorithm_for(*spec.collective);
  const bool by_dimension = config.hierarchy == config::Hierarchy::kInvolvedDim &&
                            scope == DimensionScope::kBoth && spec.ranks_per_host > 1;
  if (!spec.algorithm && by_dimension && spec.collective == trace::CollectiveType::kAllReduce) {
    spec.algorithm = collectives::Algorithm::kHierarchical;
  }
  if (!collectives::takes_channels(spec)) return;
  if (spec.algorithm.value_or(collectives::default_algorithm(spec.collective)) ==
      collectives::Algorithm::kRing) {
    spec.channels = config.ring_channels();
    spec.ring_graph = config.ring_graph;
  } else {
    spec.channels = config.channels;
  }
}

}  // namespace etwire::control

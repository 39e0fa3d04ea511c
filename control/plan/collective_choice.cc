#include "control/plan/collective_choice.h"

namespace etwire::control {

namespace {

void choose_algorithm_and_channels(const config::CollectivesConfig& config, DimensionScope scope,
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

}  // namespace

collectives::ProtocolChoice apply_collective_choices(const config::CollectivesConfig& config,
                                                     DimensionScope scope,
                                                     const collectives::TunerLinks& links,
                                                     collectives::CollectiveSpec& spec) {
  choose_algorithm_and_channels(config, scope, spec);
  collectives::ProtocolChoice choice;
  if (config.protocol.automatic) {
    choice = collectives::tune_protocol(spec, links);
  } else {
    choice.protocol = config.protocol.protocol;
  }
  spec.protocol = choice.protocol;
  return choice;
}

collectives::TunerLinks tuner_links(const config::RunConfig& config, size_t job,
                                    const JobPlacement& placement, int32_t rank) {
  collectives::TunerLinks links;
  links.nic_bytes_per_second =
      static_cast<double>(config.ports[placement.port(rank)].speed_bps) / 8;
  links.host_bytes_per_second =
      static_cast<double>(config.mapping.jobs[job].hosts.bandwidth_bps) / 8;
  return links;
}

}  // namespace etwire::control

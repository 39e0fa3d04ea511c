#include "control/plan/collective_choice.h"

#include <algorithm>
#include <vector>

namespace etwire::control {

namespace {

void choose_channels(const config::CollectivesConfig& config, const collectives::TunerLinks& links,
                     collectives::CollectiveSpec& spec) {
  spec.channels.reset();
  spec.ring_graph.reset();
  if (!collectives::takes_channels(spec) || config.channels == 0u) return;
  if (spec.algorithm.value_or(collectives::default_algorithm(spec.collective)) ==
      collectives::Algorithm::kRing) {
    spec.channels = config.ring_channels();
    spec.ring_graph = config.ring_graph;
  } else {
    spec.channels = config.channels;
  }
  // Unset: a channel per NIC of the server; with one NIC, the textbook layout.
  if (!spec.channels && links.nics_per_server > 1) spec.channels = links.nics_per_server;
}

void choose_algorithm(const config::CollectivesConfig& config, DimensionScope scope,
                      const collectives::TunerLinks& links, collectives::CollectiveSpec& spec) {
  if (spec.collective) spec.algorithm = config.algorithm_for(*spec.collective);
  const bool by_dimension = config.hierarchy == config::Hierarchy::kInvolvedDim &&
                            scope == DimensionScope::kBoth && spec.ranks_per_host > 1;
  if (!spec.algorithm && by_dimension && spec.collective == trace::CollectiveType::kAllReduce) {
    spec.algorithm = collectives::Algorithm::kHierarchical;
  }
  choose_channels(config, links, spec);
}

collectives::ProtocolChoice choose_protocol(const config::CollectivesConfig& config,
                                            const collectives::TunerLinks& links,
                                            const collectives::CollectiveSpec& spec) {
  if (config.protocol.automatic) return collectives::tune_protocol(spec, links);
  collectives::ProtocolChoice choice;
  choice.protocol = config.protocol.protocol;
  return choice;
}

// `auto`: each of NCCL's algorithms for the type with its channels and its protocol (the
// configured one, or the tuner's), the smallest time winning; a tie keeps the first in NCCL's
// order. The ring runs where no candidate has a time (a group of one rank).
CollectiveChoice tune_algorithm(const config::CollectivesConfig& config,
                                const collectives::TunerLinks& links,
                                collectives::CollectiveSpec& spec) {
  CollectiveChoice choice;
  choice.algorithm_tuned = true;
  choice.algorithm_time_us.fill(-1);
  const auto fixed = static_cast<size_t>(config.protocol.protocol);
  std::optional<collectives::Algorithm> best;
  const collectives::GroupShape shape = collectives::group_shape(spec);
  for (const collectives::Algorithm algorithm : collectives::tuner_algorithms(*spec.collective)) {
    spec.algorithm = algorithm;
    choose_channels(config, links, spec);
    const collectives::ProtocolChoice tuned = collectives::tune_protocol(spec, links, shape);
    const double time =
        tuned.time_us[config.protocol.automatic ? static_cast<size_t>(tuned.protocol) : fixed];
    choice.algorithm_time_us[static_cast<size_t>(algorithm)] = time;
    if (time < 0) continue;
    if (!best || time < choice.algorithm_time_us[static_cast<size_t>(*best)]) {
      best = algorithm;
      choice.protocol = tuned;
    }
  }
  spec.algorithm = best.value_or(collectives::Algorithm::kRing);
  choose_channels(config, links, spec);
  if (!config.protocol.automatic) choice.protocol.protocol = config.protocol.protocol;
  return choice;
}

}  // namespace

CollectiveChoice apply_collective_choices(const config::CollectivesConfig& config,
                                          DimensionScope scope,
                                          const collectives::TunerLinks& links,
                                          collectives::CollectiveSpec& spec) {
  CollectiveChoice choice;
  if (spec.collective && config.algorithm_tuned(*spec.collective)) {
    choice = tune_algorithm(config, links, spec);
  } else {
    choose_algorithm(config, scope, links, spec);
    choice.protocol = choose_protocol(config, links, spec);
  }
  spec.protocol = choice.protocol.protocol;
  return choice;
}

collectives::TunerLinks tuner_links(const config::RunConfig& config, size_t job,
                                    const JobPlacement& placement, int32_t rank) {
  collectives::TunerLinks links;
  links.nic_bytes_per_second =
      static_cast<double>(config.ports[placement.port(rank)].speed_bps) / 8;
  links.host_bytes_per_second =
      static_cast<double>(config.mapping.jobs[job].hosts.bandwidth_bps) / 8;
  // The ports of the ranks of `rank`'s host (few: one server's).
  const int64_t host = placement.host(rank);
  const auto first = static_cast<int32_t>(host * placement.ranks_per_host);
  const int32_t last =
      std::min(first + static_cast<int32_t>(placement.ranks_per_host), placement.world_size);
  std::vector<size_t> ports;
  for (int32_t r = first; r < last; ++r) {
    if (std::find(ports.begin(), ports.end(), placement.port(r)) == ports.end()) {
      ports.push_back(placement.port(r));
    }
  }
  links.nics_per_server = static_cast<uint32_t>(std::max<size_t>(ports.size(), 1));
  return links;
}

}  // namespace etwire::control

#include "twin/layout/twin_partition.h"

#include <algorithm>
#include <stdexcept>
#include <string>

#include "twin/layout/fabric_layout.h"
#include "twin/layout/setup_problem.h"

namespace etwire::twin {

namespace {

// Item `index` of `total` in `count` consecutive groups of (nearly) equal size.
uint32_t group_of(uint64_t index, uint64_t total, uint32_t count) {
  return static_cast<uint32_t>(index * count / total);
}

// `weights.size()` items in `count` (at most as many) consecutive groups of about equal weight,
// none empty: an item's group is the share of the weight before it, kept from skipping a group
// and from leaving the items after it fewer than the groups after it. Equal weights give
// group_of's groups.
std::vector<uint32_t> weighted_groups(const std::vector<uint64_t>& weights, uint32_t count) {
  uint64_t total = 0;
  for (uint64_t weight : weights) total += weight;
  const size_t items = weights.size();
  std::vector<uint32_t> groups(items, 0);
  uint64_t before = 0;
  for (size_t i = 0; i < items; ++i) {
    const uint64_t share =
        total == 0 ? group_of(i, items, count)
                   : static_cast<uint64_t>(static_cast<unsigned __int128>(before) * count / total);
    const uint64_t previous = i == 0 ? 0 : groups[i - 1];
    const uint64_t lowest = count > items - i ? count - (items - i) : 0;
    const uint64_t highest = i == 0 ? 0 : std::min<uint64_t>(previous + 1, count - 1);
    groups[i] = static_cast<uint32_t>(std::clamp(share, std::max(previous, lowest), highest));
    before += weights[i];
  }
  return groups;
}

}  // namespace

TwinPartitioning partition_fabric(const FabricLayout& layout, uint32_t count,
                                  std::span<const uint64_t> host_weights) {
  if (count == 0) throw SetupError({"fabric", "0 partitions (at least 1)"});
  TwinPartitioning partitioning;
  partitioning.count = count;
  partitioning.of_switch.assign(layout.switches(), 0);
  partitioning.of_host.assign(layout.hosts(), 0);
  if (count == 1) return partitioning;
  if (layout.leaves() < count) {
    throw SetupError({"fabric", std::to_string(count) +
                                    " partitions need as many leaves; the fabric has " +
                                    std::to_string(layout.leaves()) +
                                    " (a partition is a group of leaves with their hosts)"});
  }
  // Whole pods keep a pod's spine traffic inside its partition; with fewer pods than partitions,
  // leaves are grouped on their own and spines dealt like super-spines.
  const bool by_pod = layout.pods() >= count;
  uint64_t spines = 0;
  uint64_t supers = 0;
  for (size_t index = 0; index < layout.switches(); ++index) {
    const SwitchRole role = layout.switch_info(index).role;
    spines += role == SwitchRole::kSpine;
    supers += role == SwitchRole::kSuperSpine;
  }
  // Leaves (or pods) by the weight of their hosts.
  std::vector<uint64_t> weights(by_pod ? layout.pods() : layout.leaves(), 0);
  for (size_t host = 0; host < layout.hosts() && host < host_weights.size(); ++host) {
    const SwitchInfo& leaf =
        layout.switch_info(layout.switch_port(layout.host_switch_port(host)).switch_index);
    weights[by_pod ? leaf.pod : leaf.role_index] += host_weights[host];
  }
  const std::vector<uint32_t> groups = weighted_groups(weights, count);
  for (size_t index = 0; index < layout.switches(); ++index) {
    const SwitchInfo& info = layout.switch_info(index);
    uint32_t& partition = partitioning.of_switch[index];
    switch (info.role) {
      case SwitchRole::kSingle:
        break;
      case SwitchRole::kLeaf:
        partition = groups[by_pod ? info.pod : info.role_index];
        break;
      case SwitchRole::kSpine:
        partition = by_pod ? groups[info.pod] : group_of(info.role_index, spines, count);
        break;
      case SwitchRole::kSuperSpine:
        partition = group_of(info.role_index, supers, count);
        break;
    }
  }
  for (size_t host = 0; host < layout.hosts(); ++host) {
    const uint32_t leaf = layout.switch_port(layout.host_switch_port(host)).switch_index;
    partitioning.of_host[host] = partitioning.of_switch[leaf];
  }
  return partitioning;
}

uint32_t partition_of(const FabricLayout& layout, const TwinPartitioning& partitioning,
                      const Endpoint& end) {
  return end.is_host() ? partitioning.of_host[end.index]
                       : partitioning.of_switch[layout.switch_port(end.index).switch_index];
}

clock::Nanos partition_lookahead(const FabricLayout& layout, const TwinPartitioning& partitioning) {
  clock::Nanos shortest = clock::kNever;
  for (size_t cable = 0; cable < layout.cables(); ++cable) {
    const CableInfo& info = layout.cable(cable);
    if (partition_of(layout, partitioning, info.lower) ==
        partition_of(layout, partitioning, info.upper)) {
      continue;
    }
    if (info.propagation_ns == 0) {
      throw SetupError(
          {"fabric", "cable " + std::to_string(cable) +
                         " between two partitions has no propagation delay, which partitions "
                         "need to run apart (set fabric.propagation_delay)"});
    }
    shortest = std::min(shortest, static_cast<clock::Nanos>(info.propagation_ns));
  }
  return shortest == clock::kNever ? 0 : shortest;
}

}  // namespace etwire::twin

#include "collectives/ring_layout.h"

#include "collectives/hosts.h"

namespace etwire::collectives {

RingLayout::RingLayout(const ResolvedSpec& spec) {
  const uint32_t n = spec.members();
  const uint32_t pipelines = spec.algorithm == Algorithm::kBidirectionalRing ? 2 : spec.channels();
  order_.assign(pipelines, std::vector<uint32_t>(n));
  for (uint32_t p = 0; p < pipelines; ++p) {
    for (uint32_t i = 0; i < n; ++i) {
      // The second direction of a bidirectional ring walks the group backwards from member 0.
      order_[p][i] = spec.algorithm == Algorithm::kBidirectionalRing && p == 1 && i > 0 ? n - i : i;
    }
  }
  if (spec.rail_rings() && spec.ranks_per_host > 1 && n > 1) lay_rails(spec);
  index_.assign(pipelines, std::vector<uint32_t>(n));
  for (uint32_t p = 0; p < pipelines; ++p) {
    for (uint32_t i = 0; i < n; ++i) index_[p][order_[p][i]] = i;
  }
}

void RingLayout::lay_rails(const ResolvedSpec& spec) {
  const HostGrouping grouping{spec.ranks_per_host};
  const uint32_t n = spec.members();
  const GroupHosts hosts = group_hosts(spec.ranks, grouping);
  if (hosts.count() < 2) return;  // no hop leaves a host: nothing to relay
  relay_.assign(pipelines(), std::vector<uint32_t>(n, kNone));
  relayed_hop_.assign(pipelines(), std::vector<uint32_t>(n, kNone));
  for (uint32_t c = 0; c < pipelines(); ++c) {
    std::vector<uint32_t>& order = order_[c];
    order.clear();
    for (const std::vector<uint32_t>& members : hosts.members) {
      const size_t start = c % members.size();
      for (size_t i = 0; i < members.size(); ++i) {
        order.push_back(members[(start + i) % members.size()]);
      }
    }
    // A hop from the last member of a host to the first of the next goes through the sender's
    // host member on the receiver's rail, when there is one and it is not the sender.
    for (uint32_t k = 0; k < n; ++k) {
      const uint32_t from = order[k];
      const uint32_t to = order[(k + 1) % n];
      if (hosts.host_of[from] == hosts.host_of[to]) continue;
      const uint32_t rail = grouping.local_index(spec.ranks[to]);
      for (uint32_t member : hosts.members[hosts.host_of[from]]) {
        if (grouping.local_index(spec.ranks[member]) != rail) continue;
        if (member != from) {
          relay_[c][k] = member;
          relayed_hop_[c][member] = k;
        }
        break;
      }
    }
  }
}

}  // namespace etwire::collectives

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
  const bool hops_leave = hosts.count() > 1;  // else there is nothing to relay
  if (hops_leave) {
    relay_.assign(pipelines(), std::vector<uint32_t>(n, kNone));
    relayed_hop_.assign(pipelines(), std::vector<uint32_t>(n, kNone));
  }
  // By local index: the member of a host on that index, or kNone.
  std::vector<uint32_t> at_index(spec.ring_graph ? spec.ranks_per_host : 0, kNone);
  for (uint32_t c = 0; c < pipelines(); ++c) {
    const config::RingGraphChannel* graph =
        spec.ring_graph ? &spec.ring_graph->channels[c % spec.ring_graph->channels.size()]
                        : nullptr;
    std::vector<uint32_t>& order = order_[c];
    order.clear();
    for (const std::vector<uint32_t>& members : hosts.members) {
      if (graph) {  // the graph's GPU order, over the members the host has
        for (uint32_t member : members) at_index[grouping.local_index(spec.ranks[member])] = member;
        for (uint32_t gpu : graph->gpus) {
          if (at_index[gpu] != kNone) order.push_back(at_index[gpu]);
          at_index[gpu] = kNone;
        }
        continue;
      }
      const size_t start = c % members.size();
      for (size_t i = 0; i < members.size(); ++i) {
        order.push_back(members[(start + i) % members.size()]);
      }
    }
    // A hop from the last member of a host to the first of the next goes through the sender's
    // host member on the graph's exit NIC, else on the receiver's rail, when there is one and it
    // is not the sender.
    for (uint32_t k = 0; k < n && hops_leave; ++k) {
      const uint32_t from = order[k];
      const uint32_t to = order[(k + 1) % n];
      if (hosts.host_of[from] == hosts.host_of[to]) continue;
      const uint32_t rail =
          graph && graph->net_out ? *graph->net_out : grouping.local_index(spec.ranks[to]);
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

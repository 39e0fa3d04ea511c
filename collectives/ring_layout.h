// The rings a ring collective runs on: per pipeline (a direction of the bidirectional ring, or a
// channel) the order of the members around the ring, and where a hop between hosts is relayed.
//
// Channels (NCCL's): the data is split over C rings. Laid rail by rail (a spec with channels and
// hosts of several ranks), channel c visits every host's members in local-index order rotated to
// start at the host's c-th member, hosts in ascending order, so each host is entered on a rail
// that changes with c. The hop out of a host goes to the next host's first member, on another
// rail; it is relayed inside the host through the member on the receiving member's rail, which
// sends it over the network on that rail, as NCCL's PXN does. So every network hop of channel c
// stays on one rail (one NIC per host, one plane), and C channels over as many rails use every NIC
// evenly. An NCCL graph (ResolvedSpec::ring_graph) replaces the rotation: channel c visits each
// host's members in the order of the graph's channel c mod (its channels), and the hop out of a
// host is relayed through the member on the channel's exit NIC. Otherwise every pipeline keeps
// the group's order (the bidirectional ring's second direction reversed) and hops go straight to
// their successor.
#pragma once

#include <cstdint>
#include <vector>

#include "collectives/collective_spec.h"

namespace etwire::collectives {

class RingLayout {
 public:
  static constexpr uint32_t kNone = UINT32_MAX;

  explicit RingLayout(const ResolvedSpec& spec);

  uint32_t pipelines() const { return static_cast<uint32_t>(order_.size()); }
  // The member at ring index `index` of pipeline `p`, and the ring index of member `position`.
  uint32_t member_at(uint32_t p, uint32_t index) const { return order_[p][index]; }
  uint32_t index_of(uint32_t p, uint32_t position) const { return index_[p][position]; }
  // The member that relays the hop from ring index `index` to the next one, or kNone when the
  // hop goes straight.
  uint32_t relay_of_hop(uint32_t p, uint32_t index) const {
    return relay_.empty() ? kNone : relay_[p][index];
  }
  // The ring index of the hop member `position` relays in pipeline `p` (at most one), or kNone.
  uint32_t hop_relayed_by(uint32_t p, uint32_t position) const {
    return relayed_hop_.empty() ? kNone : relayed_hop_[p][position];
  }
  bool has_relays() const { return !relay_.empty(); }

 private:
  void lay_rails(const ResolvedSpec& spec);

  std::vector<std::vector<uint32_t>> order_;        // [pipeline][ring index] -> position
  std::vector<std::vector<uint32_t>> index_;        // [pipeline][position] -> ring index
  std::vector<std::vector<uint32_t>> relay_;        // [pipeline][hop] -> relay or kNone
  std::vector<std::vector<uint32_t>> relayed_hop_;  // [pipeline][position] -> hop or kNone
};

}  // namespace etwire::collectives

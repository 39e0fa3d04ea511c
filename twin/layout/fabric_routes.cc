// Routing around links known to be down (FabricLayout::set_cable_known_down). Routes only go up,
// then down, so which switch still reaches a leaf follows tier by tier: a spine reaches its own
// pod's leaves over its live links down, a super-spine reaches a leaf when a live link leads to
// a spine of the leaf's pod that reaches it, and a spine reaches other pods' leaves through a live
// link up to a super-spine that reaches them. A leaf's choices are its live uplinks to spines
// that reach the destination.
#include <stdexcept>
#include <string>

#include "twin/layout/fabric_layout.h"

namespace etwire::twin {

void FabricLayout::set_cable_known_down(size_t cable, bool down) {
  if (cable >= cables_.size()) {
    throw std::out_of_range("fabric twin: no cable " + std::to_string(cable));
  }
  if (switches_.front().role == SwitchRole::kSingle) return;  // one switch: nothing to reroute
  if (known_down_.empty()) known_down_.assign(switch_ports_.size(), 0);
  for (const Endpoint& end : {cables_[cable].lower, cables_[cable].upper}) {
    if (!end.is_host()) known_down_[end.index] = down ? 1 : 0;
  }
  recompute_routes();
}

std::pair<uint32_t, uint32_t> FabricLayout::candidates(uint32_t index, uint32_t leaf) const {
  const SwitchInfo& info = switches_[index];
  const LeafPlace& place = leaf_places_[leaf];
  if (place.plane != info.plane) return {0, 0};
  switch (info.role) {
    case SwitchRole::kLeaf:
      return {info.first_port + info.down_ports, leaf_uplinks_};
    case SwitchRole::kSpine:
      if (place.pod == info.pod) return {info.first_port + place.slot * links_, links_};
      return {info.first_port + info.down_ports, spine_uplinks_};
    case SwitchRole::kSuperSpine:
      return {info.first_port + place.pod * super_links_, super_links_};
    case SwitchRole::kSingle:
      break;
  }
  return {0, 0};
}

void FabricLayout::recompute_routes() {
  const size_t count = switches_.size();
  // reaches[switch * leaves + leaf]; filled spines' own pods first, then super-spines, then
  // spines toward other pods (each needs the tier it leads to).
  std::vector<uint8_t> reaches(count * leaves_, 0);
  const auto peer_switch = [&](uint32_t port) {
    return switch_ports_[switch_ports_[port].peer.index].switch_index;
  };
  // A port leads toward `leaf` when its link is not known down and the switch at its far end is
  // that leaf or reaches it.
  const auto usable = [&](uint32_t leaf, uint32_t port) {
    if (known_down_[port] != 0) return false;
    const uint32_t peer = peer_switch(port);
    const SwitchInfo& next = switches_[peer];
    if (next.role == SwitchRole::kLeaf) return next.role_index == leaf;
    return reaches[peer * leaves_ + leaf] != 0;
  };
  const auto any_usable = [&](uint32_t index, uint32_t leaf) {
    const auto [first, n] = candidates(index, leaf);
    for (uint32_t k = 0; k < n; ++k) {
      if (usable(leaf, first + k)) return true;
    }
    return false;
  };
  for (const bool own_pod : {true, false}) {
    for (const SwitchRole role : {SwitchRole::kSuperSpine, SwitchRole::kSpine}) {
      if (own_pod && role == SwitchRole::kSuperSpine) continue;
      for (uint32_t index = 0; index < count; ++index) {
        const SwitchInfo& info = switches_[index];
        if (info.role != role) continue;
        for (uint32_t leaf = 0; leaf < leaves_; ++leaf) {
          const bool in_pod = leaf_places_[leaf].pod == info.pod;
          if (role == SwitchRole::kSpine && in_pod != own_pod) continue;
          reaches[index * leaves_ + leaf] = any_usable(index, leaf) ? 1 : 0;
        }
      }
    }
  }
  routes_.assign(count * leaves_, Route{});
  route_ports_.clear();
  for (uint32_t index = 0; index < count; ++index) {
    for (uint32_t leaf = 0; leaf < leaves_; ++leaf) {
      Route& route = routes_[index * leaves_ + leaf];
      route.first = static_cast<uint32_t>(route_ports_.size());
      const auto [first, n] = candidates(index, leaf);
      for (uint32_t k = 0; k < n; ++k) {
        if (usable(leaf, first + k)) route_ports_.push_back(first + k);
      }
      route.count = static_cast<uint32_t>(route_ports_.size()) - route.first;
    }
  }
  bool any_down = false;
  for (uint8_t down : known_down_) any_down = any_down || down != 0;
  rerouted_ = any_down;
}

}  // namespace etwire::twin

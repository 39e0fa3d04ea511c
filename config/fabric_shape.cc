#include "config/fabric_shape.h"

#include <algorithm>
#include <cmath>

namespace etwire::config {

namespace {

uint64_t share(double capacity, uint32_t links, double oversubscription) {
  if (!(oversubscription > 0) || links == 0) return 0;
  return static_cast<uint64_t>(
      std::ceil(capacity / (static_cast<double>(links) * oversubscription)));
}

}  // namespace

uint32_t leaves_for(const FabricConfig& fabric, uint32_t hosts) {
  const uint32_t per_leaf = fabric.leaf_spine.ports_per_leaf;
  if (per_leaf == 0) return 0;
  const uint32_t nics = fabric.rails.nics_per_host;
  if (nics == 0) return (hosts + per_leaf - 1) / per_leaf;
  const uint32_t servers = (hosts + nics - 1) / nics;
  return (servers + per_leaf - 1) / per_leaf * nics;
}

uint32_t leaf_uplinks(const FabricConfig& fabric) {
  return fabric.leaf_spine.spines * fabric.leaf_spine.links;
}

uint32_t spine_uplinks(const FabricConfig& fabric) {
  return fabric.three_tier.super_spines * fabric.three_tier.links;
}

uint32_t leaves_per_spine(const FabricConfig& fabric, uint32_t leaves) {
  const uint32_t planes = std::max<uint32_t>(1, fabric.rails.planes);
  const uint32_t pod =
      fabric.topology == Topology::kThreeTier && fabric.three_tier.leaves_per_pod > 0
          ? std::min(leaves, fabric.three_tier.leaves_per_pod)
          : leaves;
  return (pod + planes - 1) / planes;
}

uint64_t leaf_uplink_speed_bps(const FabricConfig& fabric, uint64_t fastest_port_bps) {
  const LeafSpineConfig& ls = fabric.leaf_spine;
  if (ls.uplink_speed_bps > 0) return ls.uplink_speed_bps;
  const double downlink = static_cast<double>(fastest_port_bps) * ls.ports_per_leaf;
  return share(downlink, leaf_uplinks(fabric), ls.oversubscription);
}

uint64_t spine_uplink_speed_bps(const FabricConfig& fabric, uint32_t leaves,
                                uint64_t leaf_uplink_bps) {
  const ThreeTierConfig& tt = fabric.three_tier;
  if (tt.uplink_speed_bps > 0) return tt.uplink_speed_bps;
  const double downlink = static_cast<double>(leaves_per_spine(fabric, leaves)) *
                          fabric.leaf_spine.links * static_cast<double>(leaf_uplink_bps);
  return share(downlink, spine_uplinks(fabric), tt.oversubscription);
}

}  // namespace etwire::config

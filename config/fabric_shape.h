// What follows from the configuration about the shape of a leaf-spine or three-tier twin: how many
// leaves its ports fill, and the speeds of its inner links when the configuration gives a ratio
// instead. The configuration loader resolves with these rules and the twin builds with them.
#pragma once

#include <cstdint>

#include "config/fabric_config.h"

namespace etwire::config {

// The leaves `hosts` ports fill: ports_per_leaf to a leaf in port order, or with rails, a group
// of ports_per_leaf servers (of rails.nics_per_host ports each) per nics_per_host rail leaves.
uint32_t leaves_for(const FabricConfig& fabric, uint32_t hosts);
// Leaf-spine links per leaf (spines x links) and spine-super-spine links per spine.
uint32_t leaf_uplinks(const FabricConfig& fabric);
uint32_t spine_uplinks(const FabricConfig& fabric);
// Leaves under each spine: a pod's leaves of the spine's plane (three-tier), or every leaf of the
// plane (leaf-spine, `leaves` in all).
uint32_t leaves_per_spine(const FabricConfig& fabric, uint32_t leaves);

// Each leaf-spine link: leaf_spine.uplink_speed when given, else a leaf's downlink capacity (the
// fastest port x ports_per_leaf) over its uplinks and the oversubscription. 0 when it cannot be
// derived (no port speed, no ports per leaf, oversubscription not above 0).
uint64_t leaf_uplink_speed_bps(const FabricConfig& fabric, uint64_t fastest_port_bps);
// Each spine-super-spine link: three_tier.uplink_speed when given, else a spine's downlink
// capacity (its leaves x leaf_spine.links x the leaf uplink speed) over its uplinks and the
// three-tier oversubscription. 0 when it cannot be derived.
uint64_t spine_uplink_speed_bps(const FabricConfig& fabric, uint32_t leaves,
                                uint64_t leaf_uplink_bps);

}  // namespace etwire::config

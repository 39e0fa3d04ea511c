#include "control/check/derived_values.h"

#include <algorithm>
#include <cmath>

#include "config/fabric_shape.h"

namespace etwire::control {

void derive_port_addresses(config::RunConfig& config) {
  for (size_t i = 0; i < config.ports.size(); ++i) {
    config::PortConfig& port = config.ports[i];
    auto index = static_cast<uint32_t>(i);
    if (port.ipv4_derived) {
      port.ipv4.value = (10u << 24) | (((index >> 8) & 0xFF) << 16) | ((index & 0xFF) << 8) | 1u;
    }
    if (port.mac_derived) {
      port.mac.bytes = {0x02,
                        0x00,
                        static_cast<uint8_t>(port.ipv4.value >> 24),
                        static_cast<uint8_t>(port.ipv4.value >> 16),
                        static_cast<uint8_t>(port.ipv4.value >> 8),
                        static_cast<uint8_t>(port.ipv4.value)};
    }
    if (port.ipv6_derived && config.transport.ip_version == 6) {
      config::Ipv6Address ip;
      ip.bytes[0] = 0xFD;
      ip.bytes[6] = static_cast<uint8_t>(index >> 8);
      ip.bytes[7] = static_cast<uint8_t>(index);
      ip.bytes[15] = 1;
      port.ipv6 = ip;
    }
  }
}

void derive_path_mtu(config::RunConfig& config) {
  if (!config.transport.pmtu_auto || config.ports.empty()) return;
  uint32_t pmtu = 4096;
  for (const auto& port : config.ports) pmtu = std::min(pmtu, config::largest_path_mtu(port.mtu));
  config.transport.pmtu = pmtu;
}

void derive_port_receivers(config::RunConfig& config) {
  config::TransportConfig& transport = config.transport;
  transport.port_receivers.clear();
  const bool all_alike =
      std::all_of(config.ports.begin(), config.ports.end(), [&](const config::PortConfig& port) {
        return port.receiver.value_or(transport.receiver) == transport.receiver;
      });
  if (all_alike) return;
  for (const config::PortConfig& port : config.ports) {
    transport.port_receivers.push_back(port.receiver.value_or(transport.receiver));
  }
}

void derive_leaf_spine(config::RunConfig& config) {
  config::FabricConfig& fabric = config.fabric;
  config::LeafSpineConfig& ls = fabric.leaf_spine;
  if (fabric.topology == config::Topology::kSingleSwitch || ls.ports_per_leaf == 0) return;
  uint64_t fastest = 0;
  uint32_t hosts = 0;
  for (const auto& port : config.ports) {
    if (port.backend != config::Backend::kLoopback) continue;
    fastest = std::max(fastest, port.speed_bps);
    ++hosts;
  }
  if (fastest == 0) return;
  const bool given = ls.uplink_speed_bps > 0;
  ls.uplink_speed_bps = config::leaf_uplink_speed_bps(fabric, fastest);
  if (ls.uplink_speed_bps == 0) return;
  if (given) {
    ls.oversubscription = static_cast<double>(fastest) * ls.ports_per_leaf /
                          (static_cast<double>(ls.uplink_speed_bps) * config::leaf_uplinks(fabric));
  }
  config::ThreeTierConfig& tt = fabric.three_tier;
  if (fabric.topology != config::Topology::kThreeTier || tt.leaves_per_pod == 0) return;
  const uint32_t leaves = config::leaves_for(fabric, hosts);
  const bool spine_given = tt.uplink_speed_bps > 0;
  tt.uplink_speed_bps = config::spine_uplink_speed_bps(fabric, leaves, ls.uplink_speed_bps);
  if (spine_given && tt.uplink_speed_bps > 0) {
    const double downlink = static_cast<double>(config::leaves_per_spine(fabric, leaves)) *
                            ls.links * static_cast<double>(ls.uplink_speed_bps);
    tt.oversubscription =
        downlink / (static_cast<double>(tt.uplink_speed_bps) * config::spine_uplinks(fabric));
  }
}

}  // namespace etwire::control

// What each backend can drive: link speeds and MTUs. Validation checks every port against the
// limits of its backend so that a config is rejected before lab time is spent on it.
#pragma once

#include <cstdint>
#include <span>
#include <string>

#include "config/port_config.h"

namespace etwire::control {

struct BackendLimits {
  uint64_t min_speed_bps = 0;
  uint64_t max_speed_bps = 0;
  // When not empty, the speed must be one of these (a physical Ethernet port runs at a standard
  // rate); when empty, any speed in the range (the rate is paced in software).
  std::span<const uint64_t> standard_speeds;
  uint32_t min_mtu = 0;
  uint32_t max_mtu = 0;
  std::string why;  // what the limits come from, for messages
};

// The limits of a port: its backend's, narrowed by the device it names (a DPDK PCI device is a
// physical port; a net_af_xdp virtual device on a veth cannot take jumbo frames).
BackendLimits limits_for(const config::PortConfig& port);

// Standard Ethernet rates a physical RoCE port runs at: 1, 10, 25, 40, 50, 100, 200, 400, 800
// Gb/s.
std::span<const uint64_t> standard_ethernet_speeds();

}  // namespace etwire::control

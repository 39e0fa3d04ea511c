// The frame format of a configured port: the run's IP version, and an 802.1Q tag when the port
// has a VLAN. One place, so the plan, the goodput figure and every backend count the same bytes.
#pragma once

#include "config/run_config.h"
#include "nic/frame_size.h"

namespace etwire::nic {

inline FrameFormat frame_format(const config::RunConfig& run, const config::PortConfig& port) {
  FrameFormat format;
  format.ip_version = run.transport.ip_version;
  format.vlan_tagged = port.vlan != 0;
  return format;
}

}  // namespace etwire::nic

// How a port marks each kind of RoCEv2 packet it sends: DSCP and ECN in the IP header, and the
// 802.1p priority (PCP, used for PFC when the port is VLAN-tagged, and for the twin's queues).
#pragma once

#include <cstdint>
#include <string_view>

namespace etwire::config {

// The two ECN bits of the IP header (RFC 3168).
enum class EcnCodepoint : uint8_t { kNotEct = 0, kEct1 = 1, kEct0 = 2, kCe = 3 };
std::string_view ecn_codepoint_name(EcnCodepoint codepoint);  // "not-ect", "ect1", "ect0", "ce"

struct TrafficClass {
  uint8_t dscp = 0;      // 0..63
  uint8_t priority = 0;  // 802.1p, 0..7
  EcnCodepoint ecn = EcnCodepoint::kNotEct;
};

struct PortQos {
  // Data on the lossless class most RoCE deployments use (DSCP 26, priority 3), ECN-capable so
  // that switches can mark it.
  TrafficClass data{26, 3, EcnCodepoint::kEct0};
  // ACKs and NAKs ride with the data they acknowledge but are not ECN-capable.
  TrafficClass ack{26, 3, EcnCodepoint::kNotEct};
  // CNPs on their own high-priority class: NVIDIA's default DSCP 48, priority 6.
  TrafficClass cnp{48, 6, EcnCodepoint::kNotEct};
};

}  // namespace etwire::config

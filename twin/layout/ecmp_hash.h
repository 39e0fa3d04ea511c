// The ECMP hash a switch uses to pick one of equal links for a packet: a fixed function of the
// fields the configuration names and a seed, so one flow always takes one path and the same run
// takes the same paths. A real switch hashes with vendor CRCs and per-switch seeds; what matters
// for the twin is that different UDP source ports (RoCEv2's entropy field) spread evenly over the
// links, as balls into bins, and that another seed throws them again.
#pragma once

#include <cstdint>

#include "config/fabric_config.h"
#include "nic/packet.h"
#include "twin/prng.h"

namespace etwire::twin {

inline constexpr uint16_t kRoceUdpPort = 4791;  // RoCEv2's UDP destination port

inline uint64_t ecmp_hash(const nic::Packet& packet, config::EcmpHash fields, uint64_t seed = 0) {
  if (fields == config::EcmpHash::kUdpSourcePort) return mix64(packet.udp_source_port ^ seed);
  // Five-tuple: the port indexes stand for the IP addresses; protocol UDP (17) is constant.
  constexpr uint64_t kUdpProtocol = 17;
  const uint64_t addresses = (static_cast<uint64_t>(packet.src_port) << 32) | packet.dst_port;
  const uint64_t ports_and_protocol =
      (kUdpProtocol << 32) | (static_cast<uint64_t>(packet.udp_source_port) << 16) | kRoceUdpPort;
  return mix64(mix64(addresses ^ seed) ^ ports_and_protocol);
}

}  // namespace etwire::twin

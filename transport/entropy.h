// The UDP source port of a data packet (transport.entropy). RoCEv2 puts its flow entropy there,
// and that is the field an ECMP switch hashes: one port per QP pins the QP to one path, while a
// port that changes every few packets spreads one QP over every path, as senders built for
// packet spraying do. The port follows from the packet's PSN, so a retransmitted packet takes
// the port (and the path) its first copy took.
#pragma once

#include <cstdint>

#include "config/transport_config.h"

namespace etwire::transport {

// Spray: the QP's port advanced by one every `every` PSNs, through `values` ports, kept in the
// range 0xC000..0xFFFF that RoCEv2 source ports use (their low 14 bits wrap).
inline uint16_t data_source_port(const config::EntropyConfig& entropy, uint16_t qp_port,
                                 uint64_t psn) {
  if (entropy.mode == config::EntropyMode::kPerQp) return qp_port;
  const uint64_t step = (psn / entropy.every) % entropy.values;
  return static_cast<uint16_t>(0xC000u | ((qp_port + step) & 0x3FFFu));
}

}  // namespace etwire::transport

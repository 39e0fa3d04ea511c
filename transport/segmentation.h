// How a message becomes packets: how many, how much payload each carries, which opcode each
// gets, and which ask for an acknowledgement. Pure functions: the requester calls them for every
// packet it sends or re-sends, so a retransmission is bit-for-bit the packet it replaces.
#pragma once

#include <cstdint>

#include "config/transport_config.h"
#include "nic/packet.h"

namespace etwire::transport {

// Packets of a `bytes` message at path MTU `pmtu`; an empty message still takes one packet.
inline uint32_t packets_for(uint64_t bytes, uint32_t pmtu) {
  return bytes == 0 ? 1 : static_cast<uint32_t>((bytes + pmtu - 1) / pmtu);
}

// Payload of packet `index` (0-based) of a message.
inline uint32_t payload_of(uint64_t bytes, uint32_t pmtu, uint32_t index, uint32_t packets) {
  return index + 1 < packets ? pmtu : static_cast<uint32_t>(bytes - uint64_t{pmtu} * index);
}

// BTH opcode of packet `index` of `packets`, for the configured RDMA operation.
inline uint8_t opcode_for(config::RdmaOp op, uint32_t index, uint32_t packets) {
  namespace code = nic::opcode;
  const bool first = index == 0;
  const bool last = index + 1 == packets;
  switch (op) {
    case config::RdmaOp::kWrite:
      if (first && last) return code::kWriteOnly;
      if (first) return code::kWriteFirst;
      return last ? code::kWriteLast : code::kWriteMiddle;
    case config::RdmaOp::kWriteWithImmediate:
      if (first && last) return code::kWriteOnlyWithImmediate;
      if (first) return code::kWriteFirst;
      return last ? code::kWriteLastWithImmediate : code::kWriteMiddle;
    case config::RdmaOp::kSend:
      if (first && last) return code::kSendOnly;
      if (first) return code::kSendFirst;
      return last ? code::kSendLast : code::kSendMiddle;
  }
  return code::kWriteMiddle;
}

// The requester asks for an ACK on the last packet of every message and on every
// `ack_interval`-th packet of the QP's sequence.
inline bool wants_ack(uint64_t psn, uint32_t ack_interval, bool last_of_message) {
  if (last_of_message) return true;
  if (ack_interval == 0) return false;
  // An interval that is a power of two (the default, 16) takes a mask: this runs for every
  // packet sent, and a 64-bit division costs tens of cycles.
  const uint64_t next = psn + 1;
  if ((ack_interval & (ack_interval - 1)) == 0) return (next & (ack_interval - 1)) == 0;
  return next % ack_interval == 0;
}

}  // namespace etwire::transport

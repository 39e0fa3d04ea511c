// Packets and addresses the frame tests share: one packet per opcode with every field the
// opcode carries set to a distinctive value, and addresses for each frame format.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "nic/frame/wire_format.h"
#include "nic/frame_size.h"
#include "nic/packet.h"

namespace etwire::frame::testing {

inline constexpr uint32_t kPmtu = 4096;

inline const std::vector<uint8_t>& all_opcodes() {
  static const std::vector<uint8_t> opcodes = {
      nic::opcode::kSendFirst,   nic::opcode::kSendMiddle,
      nic::opcode::kSendLast,    nic::opcode::kSendLastWithImmediate,
      nic::opcode::kSendOnly,    nic::opcode::kSendOnlyWithImmediate,
      nic::opcode::kWriteFirst,  nic::opcode::kWriteMiddle,
      nic::opcode::kWriteLast,   nic::opcode::kWriteLastWithImmediate,
      nic::opcode::kWriteOnly,   nic::opcode::kWriteOnlyWithImmediate,
      nic::opcode::kAcknowledge, nic::opcode::kCnp};
  return opcodes;
}

struct Format {
  uint8_t ip_version;
  bool vlan;
  std::string name() const {
    return "ipv" + std::to_string(ip_version) + (vlan ? "_vlan" : "_untagged");
  }
};

inline const std::vector<Format>& all_formats() {
  static const std::vector<Format> formats = {{4, false}, {4, true}, {6, false}, {6, true}};
  return formats;
}

inline FrameAddresses addresses_for(const Format& format) {
  FrameAddresses addresses;
  addresses.src_mac = {0x02, 0x00, 0x00, 0x00, 0x00, 0x0A};
  addresses.dst_mac = {0x02, 0x00, 0x00, 0x00, 0x00, 0x0B};
  addresses.ip_version = format.ip_version;
  for (uint8_t i = 0; i < 16; ++i) {
    addresses.src_ip[i] = static_cast<uint8_t>(0x10 + i);
    addresses.dst_ip[i] = static_cast<uint8_t>(0xC0 + i);
  }
  if (format.ip_version == 4) {
    addresses.src_ip = {10, 0, 0, 1};
    addresses.dst_ip = {10, 0, 1, 2};
  }
  addresses.vlan_id = format.vlan ? 0x123 : 0;
  return addresses;
}

// A packet as the transport would hand it over, with wire_bytes for the format; priority only
// survives a round trip in a VLAN tag, so untagged packets carry 0.
inline nic::Packet packet_for(uint8_t op, uint32_t payload_bytes, const Format& format) {
  nic::Packet packet;
  packet.kind = nic::PacketKind::kRoce;
  packet.opcode = op;
  packet.udp_source_port = 0xC123;
  packet.priority = format.vlan ? 5 : 0;
  packet.dscp = 26;
  packet.ecn = nic::ecn::kEct0;
  packet.dest_qpn = 0xABCDEF;
  packet.psn = 0xFEDCBA;
  packet.bth_flags = nic::bth_flag::kAckRequest | nic::bth_flag::kSolicitedEvent;
  packet.payload_bytes = payload_bytes;
  if (has_reth(op)) {
    packet.reth_virtual_address = 0x0123456789ABCDEFull;
    packet.reth_rkey = 0xCAFEF00D;
    packet.reth_length = 0x00100000;
  }
  if (has_immediate(op)) packet.immediate = 0xDEADBEEF;
  if (op == nic::opcode::kAcknowledge) {
    packet.payload_bytes = 0;
    packet.aeth_syndrome = nic::aeth::kNakSequenceError;
    packet.aeth_msn = 0x654321;
    packet.bth_flags = 0;
  }
  if (op == nic::opcode::kCnp) {
    packet.payload_bytes = 0;
    packet.bth_flags = nic::bth_flag::kBecn;
    packet.dscp = 48;
    packet.ecn = nic::ecn::kNotEct;
  }
  packet.wire_bytes = nic::wire_bytes(packet, {format.ip_version, format.vlan});
  return packet;
}

// Payload lengths worth covering: the small ones around every pad count, around the power-of-two
// boundaries the shift tables split on, and the PMTU.
inline std::vector<uint32_t> interesting_payloads() {
  std::vector<uint32_t> lengths;
  for (uint32_t n = 0; n <= 70; ++n) lengths.push_back(n);
  for (uint32_t p = 128; p <= kPmtu; p *= 2) {
    for (uint32_t n = p - 5; n <= p + 5 && n <= kPmtu; ++n) lengths.push_back(n);
  }
  lengths.push_back(1000);
  lengths.push_back(1500);
  lengths.push_back(3001);
  return lengths;
}

}  // namespace etwire::frame::testing

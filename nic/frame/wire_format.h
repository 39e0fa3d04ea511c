// The byte-level vocabulary shared by the frame writer and reader: addresses of a frame, the
// constants of Ethernet/802.1Q/IP/UDP/BTH/PFC that the codec emits or checks, big-endian field
// access, and which BTH opcodes carry which extension headers. Field positions follow spec 3.1-3.6.
#pragma once

#include <array>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "nic/packet.h"

namespace etwire::frame {

// Addresses of one frame. The codec takes nic::Packet with dest_qpn already the on-wire QP number.
struct FrameAddresses {
  std::array<uint8_t, 6> src_mac{}, dst_mac{};
  uint8_t ip_version = 4;                      // 4 or 6
  std::array<uint8_t, 16> src_ip{}, dst_ip{};  // network byte order; IPv4 uses the first 4 bytes
  uint16_t vlan_id = 0;  // 0 = untagged; tagged frames carry Packet::priority as PCP

  bool operator==(const FrameAddresses&) const = default;
};

inline constexpr uint16_t kEtherTypeIpv4 = 0x0800;
inline constexpr uint16_t kEtherTypeIpv6 = 0x86DD;
inline constexpr uint16_t kEtherTypeVlan = 0x8100;
inline constexpr uint16_t kEtherTypeMacControl = 0x8808;
inline constexpr uint16_t kMacControlPfc = 0x0101;
inline constexpr std::array<uint8_t, 6> kPfcDestinationMac{0x01, 0x80, 0xC2, 0x00, 0x00, 0x01};
// Opcode, class-enable vector and eight quanta after the Ethernet header.
inline constexpr uint32_t kPfcBodyBytes = 2 + 2 + 8 * 2;

inline constexpr uint16_t kRoceUdpPort = 4791;
inline constexpr uint8_t kIpProtocolUdp = 17;
inline constexpr uint8_t kIpTtl = 64;  // IPv4 TTL and IPv6 hop limit
inline constexpr uint16_t kIpv4DontFragment = 0x4000;
inline constexpr uint16_t kDefaultPKey = 0xFFFF;

// The 64-byte Ethernet minimum less the FCS, which the NIC appends: shorter frames are
// zero-padded to this many bytes after their ICRC.
inline constexpr uint32_t kMinimumFrameBytesWithoutFcs = 60;

// A RoCE frame's bytes besides its payload and pad, at most: Ethernet, 802.1Q, IPv6, UDP, BTH,
// RETH or AETH and ImmDt, then the ICRC; rounded up. What a buffer for any frame adds to the PMTU.
inline constexpr uint32_t kLargestRoceOverhead = 128;

// BTH bits (spec 3.2): byte 1 SE and PadCnt, byte 4 BECN, byte 8 AckReq.
inline constexpr uint8_t kBthSolicitedEventBit = 0x80;
inline constexpr uint8_t kBthPadShift = 4;
inline constexpr uint8_t kBthBecnBit = 0x40;
inline constexpr uint8_t kBthAckRequestBit = 0x80;

// Whether the opcode is one the emulator speaks (those of nic::opcode).
constexpr bool is_known_opcode(uint8_t op) {
  return op <= nic::opcode::kWriteOnlyWithImmediate || op == nic::opcode::kAcknowledge ||
         op == nic::opcode::kCnp;
}

constexpr bool has_reth(uint8_t op) {
  return op == nic::opcode::kWriteFirst || op == nic::opcode::kWriteOnly ||
         op == nic::opcode::kWriteOnlyWithImmediate;
}

constexpr bool has_immediate(uint8_t op) {
  return op == nic::opcode::kSendLastWithImmediate || op == nic::opcode::kSendOnlyWithImmediate ||
         op == nic::opcode::kWriteLastWithImmediate || op == nic::opcode::kWriteOnlyWithImmediate;
}

// Big-endian (network order) field access on unaligned bytes.
inline uint16_t load_be16(const uint8_t* p) {
  return static_cast<uint16_t>((p[0] << 8) | p[1]);
}
inline uint32_t load_be24(const uint8_t* p) {
  return (static_cast<uint32_t>(p[0]) << 16) | (static_cast<uint32_t>(p[1]) << 8) | p[2];
}
inline uint32_t load_be32(const uint8_t* p) {
  uint32_t value;
  std::memcpy(&value, p, 4);
  return std::endian::native == std::endian::little ? __builtin_bswap32(value) : value;
}
inline uint64_t load_be64(const uint8_t* p) {
  uint64_t value;
  std::memcpy(&value, p, 8);
  return std::endian::native == std::endian::little ? __builtin_bswap64(value) : value;
}
inline void store_be16(uint8_t* p, uint16_t value) {
  p[0] = static_cast<uint8_t>(value >> 8);
  p[1] = static_cast<uint8_t>(value);
}
inline void store_be24(uint8_t* p, uint32_t value) {
  p[0] = static_cast<uint8_t>(value >> 16);
  p[1] = static_cast<uint8_t>(value >> 8);
  p[2] = static_cast<uint8_t>(value);
}
inline void store_be32(uint8_t* p, uint32_t value) {
  if constexpr (std::endian::native == std::endian::little) value = __builtin_bswap32(value);
  std::memcpy(p, &value, 4);
}
inline void store_be64(uint8_t* p, uint64_t value) {
  if constexpr (std::endian::native == std::endian::little) value = __builtin_bswap64(value);
  std::memcpy(p, &value, 8);
}

// The header checksum an IPv4 header (20 bytes, no options) should carry; the checksum field's
// current contents are ignored, so this both fills and verifies.
inline uint16_t ipv4_header_checksum(const uint8_t* header) {
  uint32_t sum = 0;
  for (int i = 0; i < 20; i += 2) {
    if (i != 10) sum += load_be16(header + i);
  }
  sum = (sum & 0xFFFF) + (sum >> 16);
  sum = (sum & 0xFFFF) + (sum >> 16);
  return static_cast<uint16_t>(~sum);
}

}  // namespace etwire::frame

// How many bytes a packet occupies on an Ethernet wire (spec 3.1): headers, pad to four bytes,
// ICRC, FCS, the 64-byte minimum frame, and the 20 bytes of preamble, SFD and inter-frame gap
// that take wire time without being part of the frame.
#pragma once

#include <algorithm>
#include <cstdint>

#include "nic/packet.h"

namespace etwire::nic {

inline constexpr uint32_t kEthernetHeaderBytes = 14;
inline constexpr uint32_t kVlanTagBytes = 4;
inline constexpr uint32_t kIpv4HeaderBytes = 20;
inline constexpr uint32_t kIpv6HeaderBytes = 40;
inline constexpr uint32_t kUdpHeaderBytes = 8;
inline constexpr uint32_t kBthBytes = 12;
inline constexpr uint32_t kRethBytes = 16;
inline constexpr uint32_t kAethBytes = 4;
inline constexpr uint32_t kImmediateBytes = 4;
inline constexpr uint32_t kCnpPayloadBytes = 16;  // reserved bytes after the CNP's BTH
inline constexpr uint32_t kIcrcBytes = 4;
inline constexpr uint32_t kFcsBytes = 4;
inline constexpr uint32_t kMinimumFrameBytes = 64;    // destination MAC through FCS
inline constexpr uint32_t kPreambleAndGapBytes = 20;  // preamble 7, SFD 1, inter-frame gap 12

// Bytes between the BTH and the payload for `op`: RETH, ImmDt, AETH, and the CNP's 16 reserved
// bytes.
constexpr uint32_t extension_header_bytes(uint8_t op) {
  switch (op) {
    case opcode::kWriteFirst:
    case opcode::kWriteOnly:
      return kRethBytes;
    case opcode::kWriteOnlyWithImmediate:
      return kRethBytes + kImmediateBytes;
    case opcode::kWriteLastWithImmediate:
    case opcode::kSendLastWithImmediate:
    case opcode::kSendOnlyWithImmediate:
      return kImmediateBytes;
    case opcode::kAcknowledge:
      return kAethBytes;
    case opcode::kCnp:
      return kCnpPayloadBytes;
    default:
      return 0;
  }
}

struct FrameFormat {
  uint8_t ip_version = 4;  // 4 or 6
  bool vlan_tagged = false;
};

// What a data packet carrying no extension header (a SEND or WRITE MIDDLE, the bulk of a message)
// adds on the wire to its payload: Ethernet, VLAN tag, IP, UDP, BTH, ICRC, FCS, preamble and gap.
// Payload / (payload + this) of the line rate is RoCE goodput at full PMTU.
constexpr uint32_t data_packet_overhead(const FrameFormat& format) {
  return kEthernetHeaderBytes + (format.vlan_tagged ? kVlanTagBytes : 0) +
         (format.ip_version == 6 ? kIpv6HeaderBytes : kIpv4HeaderBytes) + kUdpHeaderBytes +
         kBthBytes + kIcrcBytes + kFcsBytes + kPreambleAndGapBytes;
}

// Bytes of the frame itself, destination MAC through FCS (what a capture shows, plus the FCS).
// Inline, as the next one: the transport sizes every packet it sends.
inline uint32_t frame_bytes(const Packet& packet, const FrameFormat& format) {
  const uint32_t vlan = format.vlan_tagged ? kVlanTagBytes : 0;
  if (packet.kind == PacketKind::kPfcPause) return kMinimumFrameBytes;
  const uint32_t ip = format.ip_version == 6 ? kIpv6HeaderBytes : kIpv4HeaderBytes;
  const uint32_t padded_payload = (packet.payload_bytes + 3) & ~3u;
  const uint32_t frame = kEthernetHeaderBytes + vlan + ip + kUdpHeaderBytes + kBthBytes +
                         extension_header_bytes(packet.opcode) + padded_payload + kIcrcBytes +
                         kFcsBytes;
  return std::max(frame, kMinimumFrameBytes);
}

// Bytes on the wire for `packet` (its kind, opcode and payload_bytes decide the headers).
inline uint32_t wire_bytes(const Packet& packet, const FrameFormat& format) {
  return frame_bytes(packet, format) + kPreambleAndGapBytes;
}

// Bytes on the wire for a frame of `bytes_without_fcs` as a device hands it over (the FCS is
// the device's): FCS, the 64-byte minimum, preamble and gap added.
// Inline: the DPDK port counts every frame it sends with it.
inline constexpr uint32_t wire_bytes_of_frame(uint32_t bytes_without_fcs) {
  return std::max(bytes_without_fcs + kFcsBytes, kMinimumFrameBytes) + kPreambleAndGapBytes;
}

// The wire bytes of a packet cut to its headers (fabric.trimming): its padded payload gone, the
// frame still at least the Ethernet minimum.
inline uint32_t trimmed_wire_bytes(const Packet& packet) {
  const uint32_t padded_payload = (packet.payload_bytes + 3) & ~3u;
  return std::max(packet.wire_bytes - padded_payload, kMinimumFrameBytes + kPreambleAndGapBytes);
}

}  // namespace etwire::nic

#include "nic/frame_size.h"

#include <algorithm>

namespace etwire::nic {

uint32_t frame_bytes(const Packet& packet, const FrameFormat& format) {
  const uint32_t vlan = format.vlan_tagged ? kVlanTagBytes : 0;
  if (packet.kind == PacketKind::kPfcPause) return kMinimumFrameBytes;
  const uint32_t ip = format.ip_version == 6 ? kIpv6HeaderBytes : kIpv4HeaderBytes;
  const uint32_t padded_payload = (packet.payload_bytes + 3) & ~3u;
  const uint32_t frame = kEthernetHeaderBytes + vlan + ip + kUdpHeaderBytes + kBthBytes +
                         extension_header_bytes(packet.opcode) + padded_payload + kIcrcBytes +
                         kFcsBytes;
  return std::max(frame, kMinimumFrameBytes);
}

uint32_t wire_bytes(const Packet& packet, const FrameFormat& format) {
  return frame_bytes(packet, format) + kPreambleAndGapBytes;
}

}  // namespace etwire::nic

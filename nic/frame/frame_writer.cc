#include "nic/frame/frame_writer.h"

#include <cstring>

#include "nic/frame/icrc.h"
#include "nic/frame_size.h"

namespace etwire::frame {

namespace {

// IPv6, UDP, BTH, RETH and ImmDt: the most 32-bit words the ICRC covers before the payload.
constexpr size_t kMaxCoveredHeaderWords =
    (nic::kIpv6HeaderBytes + nic::kUdpHeaderBytes + nic::kBthBytes + nic::kRethBytes +
     nic::kImmediateBytes) /
    4;

// The largest payload whose IPv6 frame with RETH and ImmDt still fits the 16-bit IP lengths.
constexpr uint32_t kMaxPayloadBytes = 0xFFFF - nic::kIpv6HeaderBytes - nic::kUdpHeaderBytes -
                                      nic::kBthBytes - nic::kRethBytes - nic::kImmediateBytes -
                                      nic::kIcrcBytes - 3;

uint32_t padded(uint32_t payload_bytes) {
  return (payload_bytes + 3) & ~3u;
}

// Ethernet header, with an 802.1Q tag when addresses.vlan_id is set; the bytes written.
uint32_t write_ethernet(const FrameAddresses& addresses, uint8_t priority, uint16_t ether_type,
                        uint8_t* out) {
  std::memcpy(out, addresses.dst_mac.data(), 6);
  std::memcpy(out + 6, addresses.src_mac.data(), 6);
  if (addresses.vlan_id == 0) {
    store_be16(out + 12, ether_type);
    return nic::kEthernetHeaderBytes;
  }
  store_be16(out + 12, kEtherTypeVlan);
  store_be16(out + 14,
             static_cast<uint16_t>(((priority & 7u) << 13) | (addresses.vlan_id & 0xFFF)));
  store_be16(out + 16, ether_type);
  return nic::kEthernetHeaderBytes + nic::kVlanTagBytes;
}

bool writable(const nic::Packet& packet, const FrameAddresses& addresses,
              const PayloadPattern& payload) {
  return is_known_opcode(packet.opcode) && packet.payload_bytes <= payload.max_payload() &&
         packet.payload_bytes <= kMaxPayloadBytes &&
         (addresses.ip_version == 4 || addresses.ip_version == 6);
}

size_t write_pfc(const nic::Packet& packet, const FrameAddresses& addresses, uint8_t* out) {
  std::memcpy(out, kPfcDestinationMac.data(), 6);
  std::memcpy(out + 6, addresses.src_mac.data(), 6);
  store_be16(out + 12, kEtherTypeMacControl);
  uint8_t* body = out + nic::kEthernetHeaderBytes;
  store_be16(body, kMacControlPfc);
  store_be16(body + 2, static_cast<uint16_t>(1u << packet.pfc_priority));
  std::memset(body + 4, 0, 16);
  store_be16(body + 4 + 2 * packet.pfc_priority, packet.pfc_quanta);
  const uint32_t used = nic::kEthernetHeaderBytes + kPfcBodyBytes;
  std::memset(out + used, 0, kMinimumFrameBytesWithoutFcs - used);
  return kMinimumFrameBytesWithoutFcs;
}

}  // namespace

uint32_t FrameWriter::header_bytes(const nic::Packet& packet, uint8_t ip_version,
                                   bool vlan_tagged) {
  if (packet.kind == nic::PacketKind::kPfcPause) {
    return nic::kEthernetHeaderBytes + kPfcBodyBytes;
  }
  const uint32_t extension =
      packet.opcode == nic::opcode::kCnp ? 0 : nic::extension_header_bytes(packet.opcode);
  return nic::kEthernetHeaderBytes + (vlan_tagged ? nic::kVlanTagBytes : 0) +
         (ip_version == 6 ? nic::kIpv6HeaderBytes : nic::kIpv4HeaderBytes) + nic::kUdpHeaderBytes +
         nic::kBthBytes + extension;
}

// The covered headers (IP through the extension headers) are all whole 32-bit words: they are
// assembled as numbers, with the ICRC-masked fields at all ones, fed to the CRC straight from
// there and stored; the masked fields are then overwritten with their real values. The payload is
// accounted for by the pattern's precomputed contribution, never read.
size_t FrameWriter::write_roce(const nic::Packet& packet, const FrameAddresses& addresses,
                               uint8_t* frame, uint32_t dest_qpn) const {
  const bool ipv6 = addresses.ip_version == 6;
  const uint8_t op = packet.opcode;
  const uint32_t extension = nic::extension_header_bytes(op);
  const uint32_t pad = padded(packet.payload_bytes) - packet.payload_bytes;
  const uint32_t payload_and_pad = packet.payload_bytes + pad;
  const uint32_t ip_bytes = ipv6 ? nic::kIpv6HeaderBytes : nic::kIpv4HeaderBytes;
  const uint32_t udp_length =
      nic::kUdpHeaderBytes + nic::kBthBytes + extension + payload_and_pad + nic::kIcrcBytes;
  const uint32_t traffic_class =
      static_cast<uint32_t>((packet.dscp << 2) | (packet.ecn & 3)) & 0xFF;

  // The real values of the words the ICRC masks (IP, UDP checksum, BTH byte 4), kept in
  // registers: they are stored over the masked ones once the CRC has run. Reading them back from
  // the word array after patching it would stall on store forwarding.
  uint32_t ip_word0 = 0, ip_word1 = 0, ip_word2 = 0;
  uint32_t words[kMaxCoveredHeaderWords];
  size_t n = 0;
  if (ipv6) {
    ip_word0 = 0x60000000u | (traffic_class << 20);
    ip_word1 = (udp_length << 16) | (uint32_t{kIpProtocolUdp} << 8) | kIpTtl;
    words[n++] = ip_word0 | 0x0FFFFFFFu;
    words[n++] = ip_word1 | 0xFFu;
    for (size_t i = 0; i < 16; i += 4) words[n++] = load_be32(addresses.src_ip.data() + i);
    for (size_t i = 0; i < 16; i += 4) words[n++] = load_be32(addresses.dst_ip.data() + i);
  } else {
    const uint32_t source = load_be32(addresses.src_ip.data());
    const uint32_t destination = load_be32(addresses.dst_ip.data());
    ip_word0 = 0x45000000u | (traffic_class << 16) | (ip_bytes + udp_length);
    ip_word1 = kIpv4DontFragment;  // identification 0
    ip_word2 = (uint32_t{kIpTtl} << 24) | (uint32_t{kIpProtocolUdp} << 16);
    uint32_t sum = (ip_word0 >> 16) + (ip_word0 & 0xFFFF) + ip_word1 + (ip_word2 >> 16) +
                   (source >> 16) + (source & 0xFFFF) + (destination >> 16) +
                   (destination & 0xFFFF);
    sum = (sum & 0xFFFF) + (sum >> 16);
    sum = (sum & 0xFFFF) + (sum >> 16);
    ip_word2 |= ~sum & 0xFFFF;
    words[n++] = ip_word0 | 0x00FF0000u;
    words[n++] = ip_word1;
    words[n++] = ip_word2 | 0xFF00FFFFu;
    words[n++] = source;
    words[n++] = destination;
  }
  const size_t udp_word = n;
  words[n++] = (uint32_t{packet.udp_source_port} << 16) | kRoceUdpPort;
  words[n++] = (udp_length << 16) | 0xFFFF;  // checksum masked
  const size_t bth_word = n;
  words[n++] =
      (uint32_t{op} << 24) |
      (((packet.bth_flags & nic::bth_flag::kSolicitedEvent) ? uint32_t{kBthSolicitedEventBit} : 0)
       << 16) |
      (pad << (16 + kBthPadShift)) | kDefaultPKey;
  words[n++] = 0xFF000000u | (dest_qpn & nic::kPsnMask);  // byte 4 masked
  words[n++] =
      ((packet.bth_flags & nic::bth_flag::kAckRequest) ? uint32_t{kBthAckRequestBit} << 24 : 0) |
      (packet.psn & nic::kPsnMask);
  if (has_reth(op)) {
    words[n++] = static_cast<uint32_t>(packet.reth_virtual_address >> 32);
    words[n++] = static_cast<uint32_t>(packet.reth_virtual_address);
    words[n++] = packet.reth_rkey;
    words[n++] = packet.reth_length;
  }
  if (has_immediate(op)) {
    words[n++] = packet.immediate;
  } else if (op == nic::opcode::kAcknowledge) {
    words[n++] = (uint32_t{packet.aeth_syndrome} << 24) | (packet.aeth_msn & nic::kPsnMask);
  } else if (op == nic::opcode::kCnp) {
    for (uint32_t i = 0; i < nic::kCnpPayloadBytes / 4; ++i) words[n++] = 0;
  }

  // Two independent CRC chains, the last four words (there are always at least ten) from a zero
  // register, joined by linearity: the per-packet cost is the CRC's dependency chain, and this
  // roughly halves it.
  const uint32_t head = crc32_update_be_words(kIcrcSeed, words, n - kTailWords);
  const uint32_t tail = crc32_update_be_words(0, words + n - kTailWords, kTailWords);
  const uint32_t header_register = tail_shift_(head) ^ tail;
  const uint32_t value = icrc_from_register(payload_.extend(header_register, payload_and_pad));

  uint8_t* ip = frame + write_ethernet(addresses, packet.priority,
                                       ipv6 ? kEtherTypeIpv6 : kEtherTypeIpv4, frame);
  for (size_t i = 0; i < n; ++i) store_be32(ip + 4 * i, words[i]);
  store_be32(ip, ip_word0);
  if (ipv6) {
    store_be32(ip + 4, ip_word1);
  } else {
    store_be32(ip + 8, ip_word2);
  }
  store_be16(ip + 4 * udp_word + 6, 0);
  ip[4 * bth_word + 4] = (packet.bth_flags & nic::bth_flag::kBecn) ? kBthBecnBit : 0;
  store_icrc(ip + 4 * n + payload_and_pad, value);

  const size_t length = static_cast<size_t>(ip - frame) + ip_bytes + udp_length;
  if (length >= kMinimumFrameBytesWithoutFcs) return length;
  std::memset(frame + length, 0, kMinimumFrameBytesWithoutFcs - length);
  return kMinimumFrameBytesWithoutFcs;
}

size_t FrameWriter::write(const nic::Packet& packet, const FrameAddresses& addresses, uint8_t* out,
                          size_t capacity, uint32_t dest_qpn) const {
  if (packet.kind == nic::PacketKind::kPfcPause) {
    if (packet.pfc_priority > 7 || capacity < kMinimumFrameBytesWithoutFcs) return 0;
    return write_pfc(packet, addresses, out);
  }
  if (!writable(packet, addresses, payload_)) return 0;
  const nic::FrameFormat format{addresses.ip_version, addresses.vlan_id != 0};
  const size_t length = nic::frame_bytes(packet, format) - nic::kFcsBytes;
  if (capacity < length) return 0;
  const uint32_t payload_offset = header_bytes(packet, format.ip_version, format.vlan_tagged) +
                                  (packet.opcode == nic::opcode::kCnp ? nic::kCnpPayloadBytes : 0);
  std::memcpy(out + payload_offset, payload_.bytes(), padded(packet.payload_bytes));
  return write_roce(packet, addresses, out, dest_qpn);
}

size_t FrameWriter::write_around_payload(const nic::Packet& packet, const FrameAddresses& addresses,
                                         uint8_t* frame, uint32_t dest_qpn) const {
  if (!packet.is_data() || !writable(packet, addresses, payload_)) return 0;
  return write_roce(packet, addresses, frame, dest_qpn);
}

}  // namespace etwire::frame

#include "nic/frame/frame_reader.h"

#include <cstring>

#include "nic/frame/icrc.h"
#include "nic/frame_size.h"

namespace etwire::frame {

namespace {

// IPv6 + UDP + BTH + the longest extension (RETH + ImmDt): the most header bytes the ICRC covers
// before the payload.
constexpr size_t kMaxCoveredHeaderBytes = nic::kIpv6HeaderBytes + nic::kUdpHeaderBytes +
                                          nic::kBthBytes + nic::kRethBytes + nic::kImmediateBytes;

FrameStatus parse_pfc(const uint8_t* body, size_t available, ParsedFrame& out) {
  if (available < kPfcBodyBytes) return FrameStatus::kTruncated;
  if (load_be16(body) != kMacControlPfc) return FrameStatus::kNotRoce;
  // The high octet of the class-enable vector is reserved: ignored on receive.
  out.pfc_class_enable = body[3];
  for (size_t i = 0; i < 8; ++i) out.pfc_quanta[i] = load_be16(body + 4 + 2 * i);
  nic::Packet& packet = out.packet;
  packet.kind = nic::PacketKind::kPfcPause;
  packet.pfc_priority =
      out.pfc_class_enable == 0 ? 0 : static_cast<uint8_t>(__builtin_ctz(out.pfc_class_enable));
  packet.pfc_quanta = out.pfc_quanta[packet.pfc_priority];
  packet.priority = packet.pfc_priority;
  packet.wire_bytes = nic::wire_bytes(packet, nic::FrameFormat{});
  return FrameStatus::kPfc;
}

}  // namespace

FrameStatus FrameReader::parse(const uint8_t* frame, size_t length, ParsedFrame& out) {
  out = ParsedFrame{};
  const FrameStatus status = parse_frame(frame, length, out);
  switch (status) {
    case FrameStatus::kRoce:
    case FrameStatus::kPfc:
      break;
    case FrameStatus::kNotRoce:
      ++counters_.not_roce;
      break;
    case FrameStatus::kTruncated:
      ++counters_.truncated;
      break;
    case FrameStatus::kBadHeader:
      ++counters_.bad_header;
      break;
    case FrameStatus::kBadIcrc:
      ++counters_.bad_icrc;
      break;
    case FrameStatus::kUnknownOpcode:
      ++counters_.unknown_opcode;
      break;
  }
  return status;
}

FrameStatus FrameReader::parse_frame(const uint8_t* frame, size_t length, ParsedFrame& out) const {
  if (length < nic::kEthernetHeaderBytes) return FrameStatus::kTruncated;
  std::memcpy(out.addresses.dst_mac.data(), frame, 6);
  std::memcpy(out.addresses.src_mac.data(), frame + 6, 6);
  size_t offset = 12;
  uint16_t ether_type = load_be16(frame + offset);
  offset += 2;
  bool vlan_tagged = false;
  if (ether_type == kEtherTypeVlan) {
    if (length < nic::kEthernetHeaderBytes + nic::kVlanTagBytes) return FrameStatus::kTruncated;
    const uint16_t tci = load_be16(frame + offset);
    out.packet.priority = static_cast<uint8_t>(tci >> 13);
    out.addresses.vlan_id = tci & 0xFFF;
    ether_type = load_be16(frame + offset + 2);
    offset += nic::kVlanTagBytes;
    vlan_tagged = true;
  }
  const uint8_t* next = frame + offset;
  const size_t available = length - offset;
  switch (ether_type) {
    case kEtherTypeMacControl:
      return parse_pfc(next, available, out);
    case kEtherTypeIpv4:
    case kEtherTypeIpv6: {
      const uint8_t ip_version = ether_type == kEtherTypeIpv6 ? 6 : 4;
      const FrameStatus status = parse_roce(next, available, ip_version, out);
      if (status == FrameStatus::kRoce) {
        out.packet.wire_bytes =
            nic::wire_bytes(out.packet, nic::FrameFormat{ip_version, vlan_tagged});
      }
      return status;
    }
    default:
      return FrameStatus::kNotRoce;
  }
}

FrameStatus FrameReader::parse_roce(const uint8_t* ip, size_t available, uint8_t ip_version,
                                    ParsedFrame& out) const {
  nic::Packet& packet = out.packet;
  FrameAddresses& addresses = out.addresses;
  addresses.ip_version = ip_version;
  size_t ip_bytes = 0;
  size_t udp_length = 0;
  uint8_t traffic_class = 0;
  if (ip_version == 4) {
    ip_bytes = nic::kIpv4HeaderBytes;
    if (available < ip_bytes) return FrameStatus::kTruncated;
    if (ip[0] != 0x45) return FrameStatus::kBadHeader;  // version 4 without options only
    if (ipv4_header_checksum(ip) != load_be16(ip + 10)) return FrameStatus::kBadHeader;
    if ((load_be16(ip + 6) & 0x3FFF) != 0) return FrameStatus::kNotRoce;  // a fragment
    if (ip[9] != kIpProtocolUdp) return FrameStatus::kNotRoce;
    const size_t total = load_be16(ip + 2);
    if (total < ip_bytes + nic::kUdpHeaderBytes) return FrameStatus::kBadHeader;
    if (total > available) return FrameStatus::kTruncated;
    udp_length = total - ip_bytes;
    traffic_class = ip[1];
    std::memcpy(addresses.src_ip.data(), ip + 12, 4);
    std::memcpy(addresses.dst_ip.data(), ip + 16, 4);
  } else {
    ip_bytes = nic::kIpv6HeaderBytes;
    if (available < ip_bytes) return FrameStatus::kTruncated;
    if ((ip[0] >> 4) != 6) return FrameStatus::kBadHeader;
    if (ip[6] != kIpProtocolUdp) return FrameStatus::kNotRoce;  // extension headers included
    udp_length = load_be16(ip + 4);
    if (udp_length < nic::kUdpHeaderBytes) return FrameStatus::kBadHeader;
    if (ip_bytes + udp_length > available) return FrameStatus::kTruncated;
    traffic_class = static_cast<uint8_t>(((ip[0] & 0x0F) << 4) | (ip[1] >> 4));
    std::memcpy(addresses.src_ip.data(), ip + 8, 16);
    std::memcpy(addresses.dst_ip.data(), ip + 24, 16);
  }
  packet.dscp = traffic_class >> 2;
  packet.ecn = traffic_class & 3;

  const uint8_t* udp = ip + ip_bytes;
  if (load_be16(udp + 2) != kRoceUdpPort) return FrameStatus::kNotRoce;
  if (load_be16(udp + 4) != udp_length) return FrameStatus::kBadHeader;
  if (udp_length < nic::kUdpHeaderBytes + nic::kBthBytes + nic::kIcrcBytes) {
    return FrameStatus::kBadHeader;
  }
  packet.udp_source_port = load_be16(udp);

  // From here on everything lies inside [ip, ip + ip_bytes + udp_length), which fits `available`.
  const uint8_t* bth = udp + nic::kUdpHeaderBytes;
  const uint8_t op = bth[0];
  const size_t covered = ip_bytes + udp_length - nic::kIcrcBytes;  // IP header .. end of pad
  const uint32_t carried = load_icrc(ip + covered);
  if (!is_known_opcode(op)) {
    return icrc(ip, covered, ip_version) == carried ? FrameStatus::kUnknownOpcode
                                                    : FrameStatus::kBadIcrc;
  }
  const size_t headers =
      ip_bytes + nic::kUdpHeaderBytes + nic::kBthBytes + nic::extension_header_bytes(op);
  if (covered < headers) return FrameStatus::kBadHeader;
  const size_t payload_and_pad = covered - headers;
  const uint32_t pad = (bth[1] >> kBthPadShift) & 3;
  if (payload_and_pad % 4 != 0 || pad > payload_and_pad) return FrameStatus::kBadHeader;

  // Masked as words, not bytes in a copy: byte stores read back by the CRC's wider loads would
  // stall store forwarding.
  uint32_t words[kMaxCoveredHeaderBytes / 4];
  for (size_t i = 0; i < headers / 4; ++i) words[i] = load_be32(ip + 4 * i);
  mask_icrc_words(words, ip_version);
  uint32_t reg = crc32_update_be_words(kIcrcSeed, words, headers / 4);
  const uint8_t* payload = ip + headers;
  if (payload_and_pad <= payload_.size() &&
      std::memcmp(payload, payload_.bytes(), payload_and_pad) == 0) {
    reg = payload_.extend(reg, payload_and_pad);
  } else {
    reg = crc32_update(reg, payload, payload_and_pad);
  }
  if (icrc_from_register(reg) != carried) return FrameStatus::kBadIcrc;

  packet.kind = nic::PacketKind::kRoce;
  packet.opcode = op;
  packet.bth_flags =
      static_cast<uint8_t>(((bth[1] & kBthSolicitedEventBit) ? nic::bth_flag::kSolicitedEvent : 0) |
                           ((bth[4] & kBthBecnBit) ? nic::bth_flag::kBecn : 0) |
                           ((bth[8] & kBthAckRequestBit) ? nic::bth_flag::kAckRequest : 0));
  packet.dest_qpn = load_be24(bth + 5);
  packet.psn = load_be24(bth + 9);
  const uint8_t* ext = bth + nic::kBthBytes;
  if (has_reth(op)) {
    packet.reth_virtual_address = load_be64(ext);
    packet.reth_rkey = load_be32(ext + 8);
    packet.reth_length = load_be32(ext + 12);
    ext += nic::kRethBytes;
  }
  if (has_immediate(op)) {
    packet.immediate = load_be32(ext);
  } else if (op == nic::opcode::kAcknowledge) {
    packet.aeth_syndrome = ext[0];
    packet.aeth_msn = load_be24(ext + 1);
  }
  packet.payload_bytes = static_cast<uint32_t>(payload_and_pad - pad);
  return FrameStatus::kRoce;
}

}  // namespace etwire::frame

// The steady state of a connection's traffic is a run of full-PMTU MIDDLE packets that differ
// only in their PSN (and now and then the ACK-request bit, and under transport.entropy spray the
// UDP source port). Their other headers are the same bytes every time, and the ICRC's CRC
// register over everything in front of the PSN word is the same number.
// A template keeps both: a frame then costs a copy of the headers, the PSN word stored, one word
// of CRC, the payload's precomputed shift and the ICRC stored, instead of assembling and CRC'ing
// a dozen header words (FrameWriter::write_around_payload, which the template reproduces byte for
// byte).
#pragma once

#include <algorithm>
#include <array>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "nic/frame/frame_writer.h"
#include "nic/frame/icrc.h"
#include "nic/frame/payload_pattern.h"
#include "nic/frame/wire_format.h"
#include "nic/packet.h"

namespace etwire::frame {

// How the fields a MIDDLE frame of `payload_and_pad` payload bytes varies move its ICRC register:
// the PSN word (ACK-request bit and PSN, the last word before the payload) and the UDP source
// port (the first word of the UDP header, 16 bytes before the PSN word whatever the IP version).
// The CRC is linear, so a field's effect through the CRC steps and the payload after it is the
// XOR of its bytes' effects, tables made once. Shared by every template of that payload length.
class PsnWordShift {
 public:
  // The pattern must outlive the shift.
  PsnWordShift(const PayloadPattern& payload, uint32_t payload_and_pad);

  uint32_t operator()(uint32_t psn_word) const {
    return tables_[0][psn_word >> 24] ^ tables_[1][(psn_word >> 16) & 0xFF] ^
           tables_[2][(psn_word >> 8) & 0xFF] ^ tables_[3][psn_word & 0xFF];
  }
  // The register's change when the source port changes by `port_change` (old XOR new).
  uint32_t source_port(uint16_t port_change) const {
    return source_port_tables_[0][port_change >> 8] ^ source_port_tables_[1][port_change & 0xFF];
  }
  const PayloadPattern& payload() const { return payload_; }
  uint32_t payload_and_pad() const { return payload_and_pad_; }

 private:
  const PayloadPattern& payload_;
  uint32_t payload_and_pad_;
  std::array<std::array<uint32_t, 256>, 4> tables_;
  std::array<std::array<uint32_t, 256>, 2> source_port_tables_;
};

class MiddleFrameTemplate {
 public:
  // True for the packets a template can write: WRITE or SEND MIDDLE data packets.
  static bool applies_to(const nic::Packet& packet) {
    return packet.kind == nic::PacketKind::kRoce && (packet.opcode == nic::opcode::kWriteMiddle ||
                                                     packet.opcode == nic::opcode::kSendMiddle);
  }

  // Makes the template for packets like `prototype` (applies_to() must hold, and its padded
  // payload must be the shift's length) to `addresses` and the QP of wire number `dest_qpn`,
  // writing one frame with `writer` into `scratch`, which must hold its headers, padded payload
  // and ICRC. The shift must outlive the template.
  void build(const FrameWriter& writer, const PsnWordShift& shift, const nic::Packet& prototype,
             uint32_t dest_qpn, const FrameAddresses& addresses, uint8_t* scratch);

  // Built, and for a packet whose every header field but the PSN, the ACK-request bit and the UDP
  // source port is the prototype's. The destination QP number is not compared: a template
  // belongs to one connection, and writes the wire number it was built with.
  bool fits(const nic::Packet& packet) const {
    return ((header_key(packet) ^ key_) & ~kSourcePortBits) == 0 &&
           packet.payload_bytes == payload_bytes_ &&
           (packet.bth_flags & ~nic::bth_flag::kAckRequest) == bth_flags_;
  }

  // Ethernet, VLAN, IPv6, UDP, BTH: the longest MIDDLE header stack. write() stores this many
  // bytes in front of the payload whatever the frame's own header length.
  static constexpr size_t kMaxHeaderBytes = 80;

  // Bytes in front of the payload.
  uint32_t header_bytes() const { return header_bytes_; }
  // Bytes a frame of the template takes on the wire (nic::wire_bytes_of_frame of its length).
  uint32_t wire_bytes() const { return wire_bytes_; }

  // Writes `packet`'s headers in front of the payload that is already in place at `payload`, and
  // its ICRC behind it; the frame starts header_bytes() before `payload`, and its length is
  // returned. The kMaxHeaderBytes in front of `payload` must be writable: the headers are copied
  // as one block of that fixed size (a few vector stores, where a copy of the frame's own length
  // is a call), so the bytes ahead of the frame get filler. Precondition: fits(packet).
  size_t write(const nic::Packet& packet, uint8_t* payload) const {
    uint32_t psn_word = packet.psn & nic::kPsnMask;
    if ((packet.bth_flags & nic::bth_flag::kAckRequest) != 0) {
      psn_word |= uint32_t{kBthAckRequestBit} << 24;
    }
    std::memcpy(payload - kMaxHeaderBytes, header_.data(), kMaxHeaderBytes);
    store_be32(payload - 4, psn_word);  // the PSN word ends the BTH, the last header
    uint32_t reg = register_without_psn_ ^ (*shift_)(psn_word);
    if (packet.udp_source_port != source_port_) [[unlikely]] {
      store_be16(payload - kSourcePortBeforePayload, packet.udp_source_port);
      reg ^= shift_->source_port(packet.udp_source_port ^ source_port_);
    }
    store_icrc(payload + payload_and_pad_, icrc_from_register(reg));
    return length_;
  }

  // Where the UDP source port starts, counted back from the payload of a MIDDLE frame: the UDP
  // header (8 bytes) and the BTH (12) lie between, whatever the IP version and tagging.
  static constexpr uint32_t kSourcePortBeforePayload = 20;

 private:
  const PsnWordShift* shift_ = nullptr;
  // The headers, at the end: the first kMaxHeaderBytes - header_bytes_ bytes are filler.
  std::array<uint8_t, kMaxHeaderBytes> header_{};
  uint32_t header_bytes_ = 0;
  // The final register (before the ICRC's inversion) of the frame with a PSN word of zero: the
  // shift of the actual PSN word is XORed in.
  uint32_t register_without_psn_ = 0;
  uint32_t payload_and_pad_ = 0;
  uint32_t length_ = 0;
  uint32_t wire_bytes_ = 0;
  // What the headers were made from: header_key() of the prototype (kNotBuilt until a build
  // succeeds), its payload length and its BTH flags without the ACK-request bit.
  uint64_t key_ = kNotBuilt;
  uint32_t payload_bytes_ = 0;
  uint16_t source_port_ = 0;  // the prototype's, in the headers kept
  uint8_t bth_flags_ = 0;

  // The eight bytes of a packet from its UDP source port to its opcode (priority, DSCP, ECN,
  // kind, the ICRC fault flag between), compared as one word: field by field, fits() was a
  // tenth of a DPDK port's cost per frame.
  static uint64_t header_key(const nic::Packet& packet) {
    static_assert(offsetof(nic::Packet, opcode) - offsetof(nic::Packet, udp_source_port) == 7 &&
                      sizeof(nic::Packet::opcode) == 1,
                  "the header key's fields are no longer eight adjacent bytes");
    uint64_t key = 0;
    std::memcpy(
        &key,
        reinterpret_cast<const unsigned char*>(&packet) + offsetof(nic::Packet, udp_source_port),
        sizeof key);
    return key;
  }
  // No packet has it: its ICRC fault flag, a bool, would be 0xFF.
  static constexpr uint64_t kNotBuilt = ~uint64_t{0};
  // The source port's bits of a header key: its first two bytes in memory.
  static constexpr uint64_t kSourcePortBits =
      std::endian::native == std::endian::little ? 0xFFFFull : 0xFFFFull << 48;
};

// A power of two: the DPDK port finds a connection's template with a shift, not a multiply.
static_assert(sizeof(MiddleFrameTemplate) == 128);

}  // namespace etwire::frame

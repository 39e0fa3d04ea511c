// A packet as the data plane sees it: the header fields that matter to transport, congestion
// control and the fabric, not frame bytes. The loopback NIC and the fabric twin move this struct
// as it is; a frame backend (DPDK) serializes it into Ethernet/IP/UDP/BTH bytes on the way out
// and parses it back on the way in. Payload bytes are never carried: the emulator's data is
// synthetic, so only its length travels.
#pragma once

#include <cstdint>

namespace etwire::nic {

enum class PacketKind : uint8_t {
  kRoce,      // a RoCEv2 packet (data, ACK/NAK, CNP): the BTH fields below apply
  kPfcPause,  // an IEEE 802.1Qbb pause frame: pfc_priority and pfc_quanta apply
};

// BTH opcodes, reliable connected (spec table 3.3), and the RoCEv2 CNP.
namespace opcode {
inline constexpr uint8_t kSendFirst = 0x00;
inline constexpr uint8_t kSendMiddle = 0x01;
inline constexpr uint8_t kSendLast = 0x02;
inline constexpr uint8_t kSendLastWithImmediate = 0x03;
inline constexpr uint8_t kSendOnly = 0x04;
inline constexpr uint8_t kSendOnlyWithImmediate = 0x05;
inline constexpr uint8_t kWriteFirst = 0x06;
inline constexpr uint8_t kWriteMiddle = 0x07;
inline constexpr uint8_t kWriteLast = 0x08;
inline constexpr uint8_t kWriteLastWithImmediate = 0x09;
inline constexpr uint8_t kWriteOnly = 0x0A;
inline constexpr uint8_t kWriteOnlyWithImmediate = 0x0B;
inline constexpr uint8_t kAcknowledge = 0x11;
inline constexpr uint8_t kCnp = 0x81;
}  // namespace opcode

// BTH flag bits as carried in Packet::bth_flags (their positions in BTH bytes 1, 4 and 8 are the
// serializer's business).
namespace bth_flag {
inline constexpr uint8_t kAckRequest = 0x01;
inline constexpr uint8_t kSolicitedEvent = 0x02;
inline constexpr uint8_t kBecn = 0x04;
}  // namespace bth_flag

// AETH syndromes (bits 7..5 of the syndrome byte): ACK, and NAK with its code in the low bits.
namespace aeth {
inline constexpr uint8_t kAck = 0x1F;               // ACK, credit field "invalid" (no credits)
inline constexpr uint8_t kNakSequenceError = 0x60;  // NAK code 0: PSN sequence error
}  // namespace aeth

// IP ECN codepoints (RFC 3168), as the two low bits of the TOS / traffic class byte.
namespace ecn {
inline constexpr uint8_t kNotEct = 0;
inline constexpr uint8_t kEct1 = 1;
inline constexpr uint8_t kEct0 = 2;
inline constexpr uint8_t kCe = 3;
}  // namespace ecn

inline constexpr uint32_t kPsnMask = 0xFFFFFF;  // PSNs and QP numbers are 24-bit

struct Packet {
  // The fields are grouped by width, widest first, so that the packet has no padding and fills
  // one cache line: the twin's pool aligns each packet to a line, and a packet that has gone cold
  // on a wire or in a queue then costs one miss when it is next touched, not two.

  // RETH on WRITE FIRST/ONLY.
  uint64_t reth_virtual_address = 0;

  // Where it goes: fabric-level port indexes (the twin's hosts; a frame backend maps them to
  // MAC/IP addresses from the plan).
  uint32_t src_port = 0;
  uint32_t dst_port = 0;
  // BTH.
  uint32_t dest_qpn = 0;
  uint32_t psn = 0;
  // AETH on ACK/NAK: the message sequence number (its syndrome is below).
  uint32_t aeth_msn = 0;
  // RETH on WRITE FIRST/ONLY; ImmDt on *_WITH_IMMEDIATE.
  uint32_t reth_rkey = 0;
  uint32_t reth_length = 0;
  uint32_t immediate = 0;
  // RDMA payload bytes (not counting pad or ICRC), and the bytes the packet occupies on the wire
  // including every header, pad, ICRC, FCS, preamble and inter-frame gap: the figure that sets
  // serialization time and buffer occupancy.
  uint32_t payload_bytes = 0;
  uint32_t wire_bytes = 0;

  // PFC: for how many 512-bit-time quanta this frame pauses its class (0 resumes).
  uint16_t pfc_quanta = 0;
  // The ECMP entropy of RoCEv2, the UDP source port. From here to the opcode, eight adjacent
  // bytes: a frame template compares them as one word.
  uint16_t udp_source_port = 0;

  uint8_t priority = 0;  // 802.1p class: selects the switch queue and the PFC class
  uint8_t dscp = 0;
  uint8_t ecn = ecn::kNotEct;
  PacketKind kind = PacketKind::kRoce;
  // Damaged on the way (a twin fault) with its Ethernet FCS still good: the receiving NIC's ICRC
  // check fails and it discards the frame.
  bool icrc_bad = false;
  // BTH.
  uint8_t opcode = 0;
  uint8_t bth_flags = 0;
  // Not BTH: cut to its headers by a twin switch that would otherwise have dropped it
  // (fabric.trimming); its payload is gone (payload_bytes 0), and the receiver reports the PSN
  // lost at once.
  bool trimmed = false;
  // AETH on ACK/NAK: the syndrome.
  uint8_t aeth_syndrome = 0;
  // PFC: the class this frame pauses.
  uint8_t pfc_priority = 0;

  bool is_data() const {
    return kind == PacketKind::kRoce && opcode <= opcode::kWriteOnlyWithImmediate;
  }
};
// The twin's pool and the crossings between partitions copy it whole, and the pool gives each
// packet one cache line: two bytes are left before a field costs every packet a second line.
static_assert(sizeof(Packet) == 64, "nic::Packet grew past a cache line");

}  // namespace etwire::nic

// Parses received Ethernet frames (without FCS) back into nic::Packet: RoCEv2 over IPv4/IPv6,
// optionally 802.1Q tagged, and PFC pause frames. Checks the IP header, the lengths and the ICRC.
//
// A frame may be longer than its IP length says (Ethernet minimum padding): the IP length, not
// the frame length, locates the ICRC. The ICRC check uses the pattern's precomputed contribution
// when payload and pad equal the pattern's first bytes, and runs the CRC over them otherwise, so
// a payload altered in flight is still caught.
//
// Scope: one 802.1Q tag at most; IPv4 without options (IHL 5; fragments are not RoCE); IPv6
// without extension headers; P_Key, TVer, the M bit, reserved bits and the destination MAC are
// not checked (a NIC's filters do that). PFC means MAC control opcode 0x0101; the reserved high
// octet of its class-enable vector is ignored.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>

#include "nic/frame/payload_pattern.h"
#include "nic/frame/wire_format.h"
#include "nic/packet.h"

namespace etwire::frame {

enum class FrameStatus : uint8_t {
  kRoce,
  kPfc,
  kNotRoce,    // other ethertype, MAC control opcode, IP protocol, UDP port, or an IPv4 fragment
  kTruncated,  // ends before a header, or before the end its IP length announces
  kBadHeader,  // bad IP version/IHL/length fields or checksum, inconsistent lengths or PadCnt
  kBadIcrc,
  kUnknownOpcode,  // a BTH opcode outside nic::opcode, with a correct ICRC
};

struct ParsedFrame {
  // RoCE: kind, priority (VLAN PCP, else 0), dscp, ecn, udp_source_port, opcode, bth_flags,
  // dest_qpn (as on the wire), psn, aeth_*, reth_*, immediate, payload_bytes (without pad and
  // ICRC), wire_bytes (nic::wire_bytes with the frame's format). src_port and dst_port stay 0.
  // PFC: kind, pfc_priority = priority = the lowest enabled class (0 if none), pfc_quanta its
  // quanta, wire_bytes; the full vector is in pfc_class_enable and pfc_quanta below.
  nic::Packet packet;
  FrameAddresses addresses;  // as read (PFC: MACs and vlan_id only)
  uint8_t pfc_class_enable = 0;
  std::array<uint16_t, 8> pfc_quanta{};
};

struct FrameErrorCounters {
  uint64_t not_roce = 0;
  uint64_t truncated = 0;
  uint64_t bad_header = 0;
  uint64_t bad_icrc = 0;
  uint64_t unknown_opcode = 0;
};

class FrameReader {
 public:
  // The pattern must outlive the reader.
  explicit FrameReader(const PayloadPattern& payload) : payload_(payload) {}

  // Never reads past frame + length. `out` is reset first; on anything but kRoce/kPfc its
  // contents are partial. Counts each non-kRoce/kPfc result in counters().
  FrameStatus parse(const uint8_t* frame, size_t length, ParsedFrame& out);

  const FrameErrorCounters& counters() const { return counters_; }

 private:
  FrameStatus parse_frame(const uint8_t* frame, size_t length, ParsedFrame& out) const;
  FrameStatus parse_roce(const uint8_t* ip, size_t available, uint8_t ip_version,
                         ParsedFrame& out) const;

  const PayloadPattern& payload_;
  FrameErrorCounters counters_;
};

}  // namespace etwire::frame

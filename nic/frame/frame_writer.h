// Serializes nic::Packet into Ethernet frames: RoCEv2 over IPv4 or IPv6, optionally 802.1Q
// tagged, and PFC pause frames. Frames end before the FCS, which the NIC appends, and are exactly
// nic::frame_bytes(packet, format) - nic::kFcsBytes long (short ones zero-padded to 60 bytes).
//
// Field rules (spec 3.1-3.6): Ethernet II; 802.1Q TPID 0x8100 with PCP = packet.priority, DEI 0,
// VID = vlan_id; IPv4 IHL 5, TOS = dscp<<2 | ecn, identification 0, DF, TTL 64, UDP; IPv6 traffic
// class = dscp<<2 | ecn, flow label 0, hop limit 64, next header UDP; UDP destination 4791,
// source packet.udp_source_port, checksum 0; BTH with P_Key 0xFFFF and TVer 0; then RETH, ImmDt,
// AETH as the opcode requires, or the CNP's 16 zero bytes.
//
// Payload and pad come from the PayloadPattern (see there): the pad bytes are the pattern bytes
// after the payload, and the ICRC covers them.
//
// ICRC cost does not depend on the payload length: the writer runs the CRC over the (masked)
// IP..extension headers only, assembled as 32-bit words in registers and split into two
// independent chains, then combines that register with the pattern's precomputed payload
// contribution through one shift (PayloadPattern::extend; one table for the fast length).
#pragma once

#include <cstddef>
#include <cstdint>

#include "nic/frame/icrc.h"
#include "nic/frame/payload_pattern.h"
#include "nic/frame/wire_format.h"
#include "nic/packet.h"

namespace etwire::frame {

class FrameWriter {
 public:
  // The pattern must outlive the writer.
  explicit FrameWriter(const PayloadPattern& payload) : payload_(payload) {}

  // Bytes from the destination MAC through the last extension header (RETH/AETH/ImmDt, or for a
  // CNP through the BTH: its 16 reserved bytes are not counted) for this packet's kind, opcode and
  // format: where the payload starts, except for a CNP. For a PFC frame, the bytes through its
  // eight quanta (34).
  static uint32_t header_bytes(const nic::Packet& packet, uint8_t ip_version, bool vlan_tagged);

  // Writes the complete frame (headers, payload and pad copied from the pattern, ICRC,
  // minimum-size padding) into out; returns its length, or 0 if capacity is too small or the
  // packet cannot be written (RoCE opcode not in nic::opcode, payload longer than the pattern's
  // max_payload or than 16-bit IP lengths allow, PFC priority above 7, ip_version neither 4 nor 6).
  // PFC frames are never tagged.
  size_t write(const nic::Packet& packet, const FrameAddresses& addresses, uint8_t* out,
               size_t capacity) const {
    return write(packet, addresses, out, capacity, packet.dest_qpn);
  }
  // The same with the BTH's destination QP `dest_qpn` in place of the packet's: the QP's wire
  // number, where the packet carries its run number (control/plan/qp_numbering.h).
  size_t write(const nic::Packet& packet, const FrameAddresses& addresses, uint8_t* out,
               size_t capacity, uint32_t dest_qpn) const;

  // Hot path for data packets: the payload and pad (the pattern's first payload_bytes + pad
  // bytes) are already in place right after the headers, at frame + header_bytes(). Writes the
  // headers at `frame` and the ICRC after the padded payload (and, for frames under 60 bytes,
  // the zero padding after the ICRC); never reads or writes the payload bytes. Returns the frame
  // length, or 0 for a packet write() would refuse or one that is not data.
  size_t write_around_payload(const nic::Packet& packet, const FrameAddresses& addresses,
                              uint8_t* frame) const {
    return write_around_payload(packet, addresses, frame, packet.dest_qpn);
  }
  size_t write_around_payload(const nic::Packet& packet, const FrameAddresses& addresses,
                              uint8_t* frame, uint32_t dest_qpn) const;

 private:
  size_t write_roce(const nic::Packet& packet, const FrameAddresses& addresses, uint8_t* frame,
                    uint32_t dest_qpn) const;

  static constexpr size_t kTailWords = 4;

  const PayloadPattern& payload_;
  CrcShift tail_shift_{4 * kTailWords};  // joins the header CRC's two chains
};

}  // namespace etwire::frame

// A PFC (IEEE 802.1Qbb) frame as a Packet: it pauses one 802.1p class of the link partner for a
// number of 512-bit-time quanta, or resumes it with 0 quanta. The frame is link-local; the port
// fields only say which NIC port sends it and which receives it (the same port when a test or
// the twin addresses the NIC at one end of a link).
#pragma once

#include <cstdint>

#include "nic/frame_size.h"
#include "nic/packet.h"

namespace etwire::nic {

inline Packet pfc_frame(uint32_t src_port, uint32_t dst_port, uint8_t priority, uint16_t quanta) {
  Packet frame;
  frame.kind = PacketKind::kPfcPause;
  frame.src_port = src_port;
  frame.dst_port = dst_port;
  frame.priority = priority;
  frame.pfc_priority = priority;
  frame.pfc_quanta = quanta;
  frame.wire_bytes = wire_bytes(frame, FrameFormat{});  // untagged: a PFC frame carries no VLAN
  return frame;
}

}  // namespace etwire::nic

#include "nic/frame_size.h"

#include <gtest/gtest.h>

namespace etwire::nic {
namespace {

Packet roce(uint8_t op, uint32_t payload) {
  Packet packet;
  packet.opcode = op;
  packet.payload_bytes = payload;
  return packet;
}

TEST(FrameSize, MiddlePacketCostsPayloadPlus82OnIpv4) {
  // Spec 3.1: 62 bytes of frame overhead plus 20 of preamble, SFD and gap.
  EXPECT_EQ(wire_bytes(roce(opcode::kWriteMiddle, 4096), {}), 4096u + 82);
  EXPECT_EQ(frame_bytes(roce(opcode::kWriteMiddle, 4096), {}), 4096u + 62);
}

TEST(FrameSize, ExtensionHeadersIpv6AndVlan) {
  EXPECT_EQ(wire_bytes(roce(opcode::kWriteFirst, 4096), {}), 4096u + 82 + 16);
  EXPECT_EQ(wire_bytes(roce(opcode::kWriteOnlyWithImmediate, 100), {}), 100u + 82 + 20);
  EXPECT_EQ(wire_bytes(roce(opcode::kWriteLastWithImmediate, 100), {}), 100u + 82 + 4);
  EXPECT_EQ(wire_bytes(roce(opcode::kWriteMiddle, 4096), {6, false}), 4096u + 102);
  EXPECT_EQ(wire_bytes(roce(opcode::kWriteMiddle, 4096), {4, true}), 4096u + 86);
}

TEST(FrameSize, PayloadPaddedToFourBytes) {
  EXPECT_EQ(frame_bytes(roce(opcode::kWriteMiddle, 1001), {}), 1004u + 62);
}

TEST(FrameSize, ControlPackets) {
  // ACK: 14 + 20 + 8 + 12 + AETH 4 + ICRC 4 + FCS 4 = 66.
  EXPECT_EQ(frame_bytes(roce(opcode::kAcknowledge, 0), {}), 66u);
  // CNP: 16 reserved bytes after the BTH = 78 (the spec's golden frame is 60 bytes from the IP
  // header on, plus 14 of Ethernet and 4 of FCS).
  EXPECT_EQ(frame_bytes(roce(opcode::kCnp, 0), {}), 78u);
  Packet pause;
  pause.kind = PacketKind::kPfcPause;
  EXPECT_EQ(frame_bytes(pause, {}), 64u);
  EXPECT_EQ(wire_bytes(pause, {}), 84u);
  // The 64-byte minimum applies to a tiny payload-less SEND ONLY: 14+20+8+12+4+4 = 62 -> 64.
  EXPECT_EQ(frame_bytes(roce(opcode::kSendOnly, 0), {}), 64u);
}

TEST(FrameSize, ATrimmedPacketKeepsItsHeadersAndTheMinimumFrame) {
  Packet first = roce(opcode::kWriteFirst, 4096);
  first.wire_bytes = wire_bytes(first, {6, true});
  // The RETH stays: 82 + 16 on IPv4, here IPv6 (+20) with a VLAN tag (+4).
  EXPECT_EQ(trimmed_wire_bytes(first), 82u + 16 + 20 + 4);
  // A padded payload goes with its pad; a middle packet cut to 62 frame bytes is sent as 64.
  Packet middle = roce(opcode::kWriteMiddle, 1001);
  middle.wire_bytes = wire_bytes(middle, {});
  EXPECT_EQ(trimmed_wire_bytes(middle), 84u);
}

}  // namespace
}  // namespace etwire::nic

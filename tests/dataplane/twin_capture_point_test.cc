// The tap that captures the fabric twin's packets as the frames a DPDK port would send: data,
// CNPs and PFC frames addressed as on a wire, only while the writer captures, and a packet the
// twin damaged failing its ICRC in the capture.
#include <gtest/gtest.h>

#include <array>
#include <utility>
#include <vector>

#include "dataplane/loopback/twin_capture_point.h"
#include "nic/capture/capture_writer.h"
#include "nic/capture/frame_capture_ring.h"
#include "nic/frame/frame_reader.h"
#include "nic/pfc_frame.h"

namespace etwire::dataplane {
namespace {

using nic::Packet;
using nic::WireDirectory;
using nic::WireRoute;
using nic::capture::CapturedFrame;
using nic::capture::CaptureWriter;
using nic::capture::FrameCaptureRing;
namespace opcode = nic::opcode;
namespace ecn = nic::ecn;
namespace bth_flag = nic::bth_flag;

class TwinCapturePointTest : public ::testing::Test {
 protected:
  TwinCapturePointTest() {
    route.requester = {0, 0x101, 0};
    route.responder = {1, 0x202, 0};
    route.forward.src_mac = {2, 0, 0, 0, 0, 1};
    route.forward.dst_mac = {2, 0, 0, 0, 0, 2};
    route.forward.src_ip = {10, 0, 0, 1};
    route.forward.dst_ip = {10, 0, 0, 2};
    route.backward.src_mac = route.forward.dst_mac;
    route.backward.dst_mac = route.forward.src_mac;
    route.backward.src_ip = route.forward.dst_ip;
    route.backward.dst_ip = route.forward.src_ip;
    directory.add(0, route);
  }

  static Packet data_packet(bool ce) {
    Packet p;
    p.opcode = opcode::kWriteMiddle;
    p.dest_qpn = 0x202;
    p.psn = 17;
    p.payload_bytes = 1024;
    p.ecn = ce ? ecn::kCe : ecn::kEct0;
    return p;
  }

  // Every frame of the ring, parsed.
  std::vector<std::pair<frame::FrameStatus, frame::ParsedFrame>> parsed() {
    std::vector<std::pair<frame::FrameStatus, frame::ParsedFrame>> out;
    frame::FrameReader reader(payload);
    ring.drain([&](const CapturedFrame& f) {
      frame::ParsedFrame frame;
      const frame::FrameStatus status = reader.parse(f.bytes, f.captured, frame);
      out.emplace_back(status, frame);
    });
    return out;
  }

  frame::PayloadPattern payload{1024, 1024};
  WireRoute route;
  WireDirectory directory;
  std::array<uint8_t, 6> own_mac{2, 0, 0, 0, 0, 1};
  std::array<uint8_t, 6> peer_mac{2, 0, 0x5e, 0, 0, 7};  // the switch port at the cable's far end
  FrameCaptureRing ring{64, 2048};
  CaptureWriter writer{{}};
};

TEST_F(TwinCapturePointTest, CapturesBothWaysOnlyWhileTheWriterCaptures) {
  TwinCapturePoint port(directory, payload, ring, writer, own_mac, peer_mac);
  port.departs(data_packet(false), 5);  // not capturing yet
  EXPECT_TRUE(parsed().empty());

  writer.start(0);
  port.departs(data_packet(false), 10);
  Packet cnp;
  cnp.opcode = opcode::kCnp;
  cnp.dest_qpn = 0x101;
  cnp.bth_flags = bth_flag::kBecn;
  port.arrives(data_packet(true), 20);
  port.arrives(cnp, 30);
  port.departs(nic::pfc_frame(0, 0, 3, 0xFFFF), 40);
  port.arrives(nic::pfc_frame(0, 0, 5, 0), 45);
  Packet unknown = data_packet(false);
  unknown.dest_qpn = 0x999;
  port.departs(unknown, 50);
  EXPECT_EQ(port.unaddressed(), 1u);

  const auto frames = parsed();
  writer.stop();
  ASSERT_EQ(frames.size(), 5u);
  EXPECT_EQ(frames[0].first, frame::FrameStatus::kRoce);
  EXPECT_EQ(frames[0].second.packet.psn, 17u);
  EXPECT_EQ(frames[0].second.packet.payload_bytes, 1024u);
  EXPECT_EQ(frames[0].second.addresses, route.forward);
  EXPECT_EQ(frames[1].first, frame::FrameStatus::kRoce);
  EXPECT_EQ(frames[1].second.packet.ecn, ecn::kCe);
  EXPECT_EQ(frames[2].first, frame::FrameStatus::kRoce);
  EXPECT_EQ(frames[2].second.packet.opcode, opcode::kCnp);
  EXPECT_EQ(frames[2].second.addresses, route.backward);
  EXPECT_EQ(frames[3].first, frame::FrameStatus::kPfc);
  EXPECT_EQ(frames[3].second.packet.pfc_priority, 3);
  EXPECT_EQ(frames[3].second.addresses.src_mac, own_mac);
  EXPECT_EQ(frames[4].first, frame::FrameStatus::kPfc);
  EXPECT_EQ(frames[4].second.packet.pfc_priority, 5);
  EXPECT_EQ(frames[4].second.addresses.src_mac, peer_mac);
}

TEST_F(TwinCapturePointTest, FramesCarryTheWireNumbersEachPortGivesItsQps) {
  // Packets carry run numbers (0x101, 0x202); on the wire each port numbers its own QPs.
  WireRoute numbered = route;
  numbered.requester.wire_qpn = 0x300;
  numbered.responder.wire_qpn = 0x100;
  WireDirectory wired;
  wired.add(0, numbered);
  TwinCapturePoint port(wired, payload, ring, writer, own_mac, peer_mac);
  writer.start(0);
  port.departs(data_packet(false), 1);
  Packet ack;
  ack.opcode = opcode::kAcknowledge;
  ack.dest_qpn = 0x101;
  port.arrives(ack, 2);
  const auto frames = parsed();
  writer.stop();
  ASSERT_EQ(frames.size(), 2u);
  EXPECT_EQ(frames[0].second.packet.dest_qpn, 0x100u) << "the responder's wire number";
  EXPECT_EQ(frames[1].second.packet.dest_qpn, 0x300u) << "the requester's wire number";
  EXPECT_EQ(port.unaddressed(), 0u);
}

TEST_F(TwinCapturePointTest, APacketTheTwinCorruptedFailsItsIcrcInTheCapture) {
  TwinCapturePoint port(directory, payload, ring, writer, own_mac, peer_mac);
  writer.start(0);
  Packet damaged = data_packet(false);
  damaged.icrc_bad = true;
  port.arrives(damaged, 1);
  const auto frames = parsed();
  writer.stop();
  ASSERT_EQ(frames.size(), 1u);
  EXPECT_EQ(frames[0].first, frame::FrameStatus::kBadIcrc);
}

}  // namespace
}  // namespace etwire::dataplane

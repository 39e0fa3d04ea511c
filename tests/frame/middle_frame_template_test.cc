// The template writes exactly the frames FrameWriter writes, for every format, both MIDDLE
// opcodes, any PSN, either ACK-request bit and any UDP source port (sprayed entropy), and refuses
// packets whose other headers differ.
#include "nic/frame/middle_frame_template.h"

#include <gtest/gtest.h>

#include <random>
#include <vector>

#include "tests/frame/frame_test_support.h"

namespace etwire::frame {
namespace {

using testing::addresses_for;
using testing::all_formats;
using testing::Format;
using testing::kPmtu;
using testing::packet_for;

class MiddleFrameTemplateTest : public ::testing::Test {
 protected:
  // A frame buffer with the payload in place behind `headers` bytes, as a DPDK data mbuf has it.
  std::vector<uint8_t> buffer(uint32_t headers) const {
    std::vector<uint8_t> frame(headers + kPmtu + 64, 0xEE);
    std::copy_n(pattern_.bytes(), kPmtu, frame.begin() + headers);
    return frame;
  }

  PayloadPattern pattern_{kPmtu, kPmtu};
  FrameWriter writer_{pattern_};
  PsnWordShift shift_{pattern_, kPmtu};
  std::vector<uint8_t> scratch_ = std::vector<uint8_t>(kPmtu + 256);
};

TEST_F(MiddleFrameTemplateTest, WritesWhatTheWriterWrites) {
  std::mt19937 random(99);
  for (const Format& format : all_formats()) {
    const FrameAddresses addresses = addresses_for(format);
    for (uint8_t op : {nic::opcode::kWriteMiddle, nic::opcode::kSendMiddle}) {
      nic::Packet prototype = packet_for(op, kPmtu, format);
      // Frames carry the destination QP's wire number, which its port gave it, not the run's.
      const uint32_t wire_qpn = prototype.dest_qpn ^ 0x5A5A5;
      MiddleFrameTemplate frame_template;
      frame_template.build(writer_, shift_, prototype, wire_qpn, addresses, scratch_.data());
      for (int i = 0; i < 64; ++i) {
        nic::Packet packet = prototype;
        packet.psn = static_cast<uint32_t>(random()) & nic::kPsnMask;
        packet.bth_flags = (i % 3 == 0) ? prototype.bth_flags | nic::bth_flag::kAckRequest
                                        : prototype.bth_flags & ~nic::bth_flag::kAckRequest;
        // Half of them on another source port, as a sprayed QP's.
        if (i % 2 == 1) packet.udp_source_port = static_cast<uint16_t>(random());
        ASSERT_TRUE(frame_template.fits(packet));
        const uint32_t headers = frame_template.header_bytes();
        ASSERT_EQ(headers, FrameWriter::header_bytes(packet, format.ip_version, format.vlan));
        std::vector<uint8_t> expected = buffer(headers);
        // The template writes a fixed block in front of the payload, filler ahead of the frame.
        constexpr uint32_t kLead = MiddleFrameTemplate::kMaxHeaderBytes;
        std::vector<uint8_t> actual = buffer(kLead);
        const size_t expected_length =
            writer_.write_around_payload(packet, addresses, expected.data(), wire_qpn);
        const size_t length = frame_template.write(packet, actual.data() + kLead);
        ASSERT_EQ(length, expected_length);
        ASSERT_EQ(std::vector<uint8_t>(actual.begin() + (kLead - headers), actual.end()), expected)
            << format.name() << " op " << int(op) << " psn " << packet.psn;
      }
    }
  }
}

TEST_F(MiddleFrameTemplateTest, RefusesPacketsWithOtherHeaders) {
  const Format format{4, true};
  const nic::Packet prototype = packet_for(nic::opcode::kWriteMiddle, kPmtu, format);
  MiddleFrameTemplate frame_template;
  EXPECT_FALSE(frame_template.fits(prototype));  // not built yet
  frame_template.build(writer_, shift_, prototype, prototype.dest_qpn, addresses_for(format),
                       scratch_.data());
  EXPECT_TRUE(frame_template.fits(prototype));
  const auto differs = [&](auto change) {
    nic::Packet packet = prototype;
    change(packet);
    return !frame_template.fits(packet);
  };
  EXPECT_TRUE(differs([](nic::Packet& p) { p.opcode = nic::opcode::kSendMiddle; }));
  EXPECT_TRUE(differs([](nic::Packet& p) { p.payload_bytes = kPmtu - 4; }));
  EXPECT_TRUE(differs([](nic::Packet& p) { p.dscp ^= 1; }));
  EXPECT_TRUE(differs([](nic::Packet& p) { p.ecn = nic::ecn::kCe; }));
  EXPECT_TRUE(differs([](nic::Packet& p) { p.priority ^= 1; }));
  EXPECT_TRUE(differs([](nic::Packet& p) { p.bth_flags ^= nic::bth_flag::kBecn; }));
  // The DPDK port looks a template up by the packet's destination QP whatever the packet is: an
  // acknowledgement or a pause frame must not fit.
  EXPECT_TRUE(differs([](nic::Packet& p) { p.opcode = nic::opcode::kAcknowledge; }));
  EXPECT_TRUE(differs([](nic::Packet& p) { p.kind = nic::PacketKind::kPfcPause; }));
  EXPECT_TRUE(differs([](nic::Packet& p) { p.icrc_bad = true; }));
  EXPECT_FALSE(differs([](nic::Packet& p) { p.psn ^= 0x123; }));
  EXPECT_FALSE(differs([](nic::Packet& p) { p.udp_source_port ^= 0x1234; }));
  // The QP number is the template's own: the connection's, whatever the packet says.
  EXPECT_FALSE(differs([](nic::Packet& p) { p.dest_qpn ^= 1; }));
  EXPECT_FALSE(differs([](nic::Packet& p) { p.bth_flags ^= nic::bth_flag::kAckRequest; }));
  EXPECT_FALSE(
      MiddleFrameTemplate::applies_to(packet_for(nic::opcode::kWriteFirst, kPmtu, format)));
  EXPECT_TRUE(MiddleFrameTemplate::applies_to(prototype));
}

}  // namespace
}  // namespace etwire::frame

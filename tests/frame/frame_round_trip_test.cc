// write -> parse gives back every field, for every opcode, IP version and tagging, and PFC.
#include <gtest/gtest.h>

#include <vector>

#include "nic/frame/frame_reader.h"
#include "nic/frame/frame_writer.h"
#include "nic/frame_size.h"
#include "nic/pfc_frame.h"
#include "tests/frame/frame_test_support.h"

namespace etwire::frame {
namespace {

using testing::addresses_for;
using testing::all_formats;
using testing::all_opcodes;
using testing::Format;
using testing::kPmtu;
using testing::packet_for;

void expect_same_packet(const nic::Packet& got, const nic::Packet& want) {
  EXPECT_EQ(got.src_port, want.src_port);
  EXPECT_EQ(got.dst_port, want.dst_port);
  EXPECT_EQ(got.udp_source_port, want.udp_source_port);
  EXPECT_EQ(got.priority, want.priority);
  EXPECT_EQ(got.dscp, want.dscp);
  EXPECT_EQ(got.ecn, want.ecn);
  EXPECT_EQ(got.kind, want.kind);
  EXPECT_EQ(got.opcode, want.opcode);
  EXPECT_EQ(got.bth_flags, want.bth_flags);
  EXPECT_EQ(got.dest_qpn, want.dest_qpn);
  EXPECT_EQ(got.psn, want.psn);
  EXPECT_EQ(got.aeth_syndrome, want.aeth_syndrome);
  EXPECT_EQ(got.aeth_msn, want.aeth_msn);
  EXPECT_EQ(got.reth_virtual_address, want.reth_virtual_address);
  EXPECT_EQ(got.reth_rkey, want.reth_rkey);
  EXPECT_EQ(got.reth_length, want.reth_length);
  EXPECT_EQ(got.immediate, want.immediate);
  EXPECT_EQ(got.pfc_priority, want.pfc_priority);
  EXPECT_EQ(got.pfc_quanta, want.pfc_quanta);
  EXPECT_EQ(got.payload_bytes, want.payload_bytes);
  EXPECT_EQ(got.wire_bytes, want.wire_bytes);
}

class RoundTripTest : public ::testing::Test {
 protected:
  PayloadPattern pattern_{kPmtu, kPmtu};
  FrameWriter writer_{pattern_};
  FrameReader reader_{pattern_};
};

TEST_F(RoundTripTest, EveryOpcodeFormatAndPadCount) {
  const std::vector<uint32_t> payloads = {0, 1, 2, 3, 4, 5, 63, 64, 1023, 1024, 4093, kPmtu};
  for (const Format& format : all_formats()) {
    const FrameAddresses addresses = addresses_for(format);
    for (uint8_t op : all_opcodes()) {
      for (uint32_t payload : payloads) {
        SCOPED_TRACE(format.name() + " op " + std::to_string(op) + " payload " +
                     std::to_string(payload));
        const nic::Packet packet = packet_for(op, payload, format);
        std::vector<uint8_t> frame(kPmtu + 128);
        const size_t length = writer_.write(packet, addresses, frame.data(), frame.size());
        ASSERT_GT(length, 0u);
        ParsedFrame parsed;
        ASSERT_EQ(reader_.parse(frame.data(), length, parsed), FrameStatus::kRoce);
        expect_same_packet(parsed.packet, packet);
        EXPECT_EQ(parsed.addresses, addresses);
      }
    }
  }
  const FrameErrorCounters& counters = reader_.counters();
  EXPECT_EQ(counters.not_roce + counters.truncated + counters.bad_header + counters.bad_icrc +
                counters.unknown_opcode,
            0u);
}

TEST_F(RoundTripTest, FlagCombinationsAndFieldExtremes) {
  const Format format{4, true};
  for (uint8_t flags = 0; flags < 8; ++flags) {
    nic::Packet packet = packet_for(nic::opcode::kWriteOnlyWithImmediate, 17, format);
    packet.bth_flags = flags;
    packet.priority = flags;
    packet.dscp = 63;
    packet.ecn = nic::ecn::kCe;
    packet.dest_qpn = nic::kPsnMask;
    packet.psn = flags == 0 ? 0 : nic::kPsnMask;
    packet.reth_virtual_address = ~0ull;
    packet.reth_rkey = 0;
    packet.reth_length = ~0u;
    packet.udp_source_port = 0xFFFF;
    FrameAddresses addresses = addresses_for(format);
    addresses.vlan_id = 4095;
    std::vector<uint8_t> frame(256);
    const size_t length = writer_.write(packet, addresses, frame.data(), frame.size());
    ParsedFrame parsed;
    ASSERT_EQ(reader_.parse(frame.data(), length, parsed), FrameStatus::kRoce);
    expect_same_packet(parsed.packet, packet);
    EXPECT_EQ(parsed.addresses, addresses);
  }
}

TEST_F(RoundTripTest, EthernetPaddingAfterTheIcrcIsIgnored) {
  for (const Format& format : all_formats()) {
    const nic::Packet packet = packet_for(nic::opcode::kSendOnly, 0, format);
    std::vector<uint8_t> frame(256, 0);
    const size_t length = writer_.write(packet, addresses_for(format), frame.data(), 256);
    for (size_t longer = length; longer <= length + 40; ++longer) {
      ParsedFrame parsed;
      ASSERT_EQ(reader_.parse(frame.data(), longer, parsed), FrameStatus::kRoce) << longer;
      EXPECT_EQ(parsed.packet.payload_bytes, 0u);
    }
  }
}

TEST_F(RoundTripTest, PayloadOtherThanThePatternTakesTheSlowPath) {
  for (const Format& format : all_formats()) {
    const nic::Packet packet = packet_for(nic::opcode::kWriteMiddle, 999, format);
    std::vector<uint8_t> frame(2048);
    const size_t length = writer_.write(packet, addresses_for(format), frame.data(), 2048);
    const uint32_t headers = FrameWriter::header_bytes(packet, format.ip_version, format.vlan);
    for (uint32_t i = 0; i < 1000; ++i) frame[headers + i] = static_cast<uint8_t>(i * 37 + 1);
    const size_t l2 = format.vlan ? 18 : 14;
    const size_t covered = length - l2 - 4;
    store_icrc(&frame[l2 + covered], icrc(&frame[l2], covered, format.ip_version));
    ParsedFrame parsed;
    ASSERT_EQ(reader_.parse(frame.data(), length, parsed), FrameStatus::kRoce);
    expect_same_packet(parsed.packet, packet);
  }
}

TEST_F(RoundTripTest, PfcPause) {
  for (uint8_t priority = 0; priority < 8; ++priority) {
    const nic::Packet pause =
        nic::pfc_frame(0, 0, priority, static_cast<uint16_t>(priority * 1000));
    FrameAddresses addresses = addresses_for({4, false});
    std::vector<uint8_t> frame(64);
    const size_t length = writer_.write(pause, addresses, frame.data(), frame.size());
    ASSERT_EQ(length, 60u);
    ParsedFrame parsed;
    ASSERT_EQ(reader_.parse(frame.data(), length, parsed), FrameStatus::kPfc);
    expect_same_packet(parsed.packet, pause);
    EXPECT_EQ(parsed.pfc_class_enable, 1u << priority);
    for (uint8_t i = 0; i < 8; ++i) {
      EXPECT_EQ(parsed.pfc_quanta[i], i == priority ? pause.pfc_quanta : 0);
    }
    EXPECT_EQ(parsed.addresses.src_mac, addresses.src_mac);
    EXPECT_EQ(parsed.addresses.dst_mac, kPfcDestinationMac);
  }
}

TEST_F(RoundTripTest, MultiClassPfcFrame) {
  std::vector<uint8_t> frame(60, 0);
  std::copy(kPfcDestinationMac.begin(), kPfcDestinationMac.end(), frame.begin());
  frame[6] = 0x02;
  store_be16(&frame[12], kEtherTypeMacControl);
  store_be16(&frame[14], kMacControlPfc);
  store_be16(&frame[16], 0xFF28);  // classes 3 and 5; reserved high octet set, ignored
  store_be16(&frame[18 + 2 * 3], 0x1234);
  store_be16(&frame[18 + 2 * 5], 0xFFFF);
  store_be16(&frame[18 + 2 * 7], 0x0042);  // not enabled: reported, but not in the packet
  ParsedFrame parsed;
  ASSERT_EQ(reader_.parse(frame.data(), frame.size(), parsed), FrameStatus::kPfc);
  EXPECT_EQ(parsed.pfc_class_enable, 0x28);
  EXPECT_EQ(parsed.pfc_quanta[3], 0x1234);
  EXPECT_EQ(parsed.pfc_quanta[5], 0xFFFF);
  EXPECT_EQ(parsed.pfc_quanta[7], 0x0042);
  EXPECT_EQ(parsed.pfc_quanta[0], 0);
  EXPECT_EQ(parsed.packet.kind, nic::PacketKind::kPfcPause);
  EXPECT_EQ(parsed.packet.pfc_priority, 3);
  EXPECT_EQ(parsed.packet.priority, 3);
  EXPECT_EQ(parsed.packet.pfc_quanta, 0x1234);
  EXPECT_EQ(parsed.packet.wire_bytes, 84u);
}

}  // namespace
}  // namespace etwire::frame

#include "nic/frame/frame_writer.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <random>
#include <vector>

#include "nic/frame/icrc.h"
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

class FrameWriterTest : public ::testing::Test {
 protected:
  PayloadPattern pattern_{kPmtu, kPmtu};
  FrameWriter writer_{pattern_};
};

size_t l2_bytes(const Format& format) {
  return format.vlan ? 18 : 14;
}

// The reference ICRC of a written RoCE frame, located through its own IP length.
uint32_t reference_icrc(const std::vector<uint8_t>& frame, size_t length, const Format& format) {
  const uint8_t* ip = frame.data() + l2_bytes(format);
  const size_t ip_total = format.ip_version == 6 ? 40u + load_be16(ip + 4) : load_be16(ip + 2);
  EXPECT_LE(l2_bytes(format) + ip_total, length);
  return icrc(ip, ip_total - 4, format.ip_version);
}

uint32_t carried_icrc(const std::vector<uint8_t>& frame, const Format& format) {
  const uint8_t* ip = frame.data() + l2_bytes(format);
  const size_t ip_total = format.ip_version == 6 ? 40u + load_be16(ip + 4) : load_be16(ip + 2);
  return load_icrc(ip + ip_total - 4);
}

TEST_F(FrameWriterTest, LengthIsFrameBytesWithoutFcsForEveryOpcodeAndFormat) {
  for (const Format& format : all_formats()) {
    for (uint8_t op : all_opcodes()) {
      for (uint32_t payload : testing::interesting_payloads()) {
        const nic::Packet packet = packet_for(op, payload, format);
        std::vector<uint8_t> frame(8192);
        const size_t length =
            writer_.write(packet, addresses_for(format), frame.data(), frame.size());
        ASSERT_EQ(length,
                  nic::frame_bytes(packet, {format.ip_version, format.vlan}) - nic::kFcsBytes)
            << format.name() << " op " << int(op) << " payload " << payload;
        ASSERT_GE(length, 60u);
      }
    }
  }
}

TEST_F(FrameWriterTest, HeaderBytes) {
  const Format v4{4, false}, v6_vlan{6, true};
  EXPECT_EQ(FrameWriter::header_bytes(packet_for(nic::opcode::kWriteMiddle, 0, v4), 4, false),
            14u + 20 + 8 + 12);
  EXPECT_EQ(FrameWriter::header_bytes(packet_for(nic::opcode::kWriteFirst, 0, v4), 4, false),
            14u + 20 + 8 + 12 + 16);
  EXPECT_EQ(FrameWriter::header_bytes(packet_for(nic::opcode::kWriteOnlyWithImmediate, 0, v6_vlan),
                                      6, true),
            18u + 40 + 8 + 12 + 20);
  EXPECT_EQ(FrameWriter::header_bytes(packet_for(nic::opcode::kAcknowledge, 0, v4), 4, false),
            14u + 20 + 8 + 12 + 4);
  EXPECT_EQ(FrameWriter::header_bytes(packet_for(nic::opcode::kCnp, 0, v4), 4, false),
            14u + 20 + 8 + 12);
  EXPECT_EQ(FrameWriter::header_bytes(nic::pfc_frame(0, 0, 3, 100), 4, false), 34u);
}

TEST_F(FrameWriterTest, Ipv4UntaggedWriteFirstFieldByField) {
  const Format format{4, false};
  nic::Packet packet = packet_for(nic::opcode::kWriteFirst, 1001, format);
  packet.bth_flags = nic::bth_flag::kAckRequest | nic::bth_flag::kBecn;
  std::vector<uint8_t> f(2048, 0xEE);
  const size_t length = writer_.write(packet, addresses_for(format), f.data(), f.size());
  ASSERT_EQ(length, 14u + 20 + 8 + 12 + 16 + 1004 + 4);

  EXPECT_EQ(std::vector<uint8_t>(f.begin(), f.begin() + 6),
            std::vector<uint8_t>({0x02, 0, 0, 0, 0, 0x0B}));
  EXPECT_EQ(std::vector<uint8_t>(f.begin() + 6, f.begin() + 12),
            std::vector<uint8_t>({0x02, 0, 0, 0, 0, 0x0A}));
  EXPECT_EQ(load_be16(&f[12]), 0x0800);
  const uint8_t* ip = &f[14];
  EXPECT_EQ(ip[0], 0x45);
  EXPECT_EQ(ip[1], (26 << 2) | nic::ecn::kEct0);
  EXPECT_EQ(load_be16(ip + 2), length - 14);
  EXPECT_EQ(load_be16(ip + 4), 0);
  EXPECT_EQ(load_be16(ip + 6), 0x4000);
  EXPECT_EQ(ip[8], 64);
  EXPECT_EQ(ip[9], 17);
  EXPECT_EQ(load_be16(ip + 10), ipv4_header_checksum(ip));
  EXPECT_EQ(load_be32(ip + 12), 0x0A000001u);
  EXPECT_EQ(load_be32(ip + 16), 0x0A000102u);
  const uint8_t* udp = ip + 20;
  EXPECT_EQ(load_be16(udp), 0xC123);
  EXPECT_EQ(load_be16(udp + 2), 4791);
  EXPECT_EQ(load_be16(udp + 4), length - 14 - 20);
  EXPECT_EQ(load_be16(udp + 6), 0);
  const uint8_t* bth = udp + 8;
  EXPECT_EQ(bth[0], nic::opcode::kWriteFirst);
  EXPECT_EQ(bth[1], 3 << 4);  // SE clear, M 0, PadCnt 3, TVer 0
  EXPECT_EQ(load_be16(bth + 2), 0xFFFF);
  EXPECT_EQ(bth[4], 0x40);
  EXPECT_EQ(load_be24(bth + 5), 0xABCDEFu);
  EXPECT_EQ(bth[8], 0x80);
  EXPECT_EQ(load_be24(bth + 9), 0xFEDCBAu);
  const uint8_t* reth = bth + 12;
  EXPECT_EQ(load_be64(reth), 0x0123456789ABCDEFull);
  EXPECT_EQ(load_be32(reth + 8), 0xCAFEF00Du);
  EXPECT_EQ(load_be32(reth + 12), 0x00100000u);
  const uint8_t* payload = reth + 16;
  EXPECT_EQ(std::memcmp(payload, pattern_.bytes(), 1004), 0);  // pad = pattern bytes 1001..1003
  EXPECT_EQ(load_icrc(payload + 1004), reference_icrc(f, length, format));
  EXPECT_EQ(f[length], 0xEE);
}

TEST_F(FrameWriterTest, Ipv6TaggedSendOnlyWithImmediateFieldByField) {
  const Format format{6, true};
  nic::Packet packet = packet_for(nic::opcode::kSendOnlyWithImmediate, 6, format);
  packet.bth_flags = nic::bth_flag::kSolicitedEvent;
  std::vector<uint8_t> f(256, 0xEE);
  const size_t length = writer_.write(packet, addresses_for(format), f.data(), f.size());
  ASSERT_EQ(length, 18u + 40 + 8 + 12 + 4 + 8 + 4);
  EXPECT_EQ(load_be16(&f[12]), 0x8100);
  EXPECT_EQ(load_be16(&f[14]), (5 << 13) | 0x123);
  EXPECT_EQ(load_be16(&f[16]), 0x86DD);
  const uint8_t* ip = &f[18];
  EXPECT_EQ(load_be32(ip), 0x60000000u | (((26u << 2) | nic::ecn::kEct0) << 20));
  EXPECT_EQ(load_be16(ip + 4), length - 18 - 40);
  EXPECT_EQ(ip[6], 17);
  EXPECT_EQ(ip[7], 64);
  EXPECT_EQ(ip[8], 0x10);
  EXPECT_EQ(ip[39], 0xCF);
  const uint8_t* bth = ip + 40 + 8;
  EXPECT_EQ(bth[1], 0x80 | (2 << 4));
  EXPECT_EQ(bth[4], 0);
  EXPECT_EQ(bth[8], 0);
  EXPECT_EQ(load_be32(bth + 12), 0xDEADBEEFu);
  EXPECT_EQ(load_icrc(bth + 16 + 8), reference_icrc(f, length, format));
}

TEST_F(FrameWriterTest, AcknowledgeCarriesAeth) {
  const Format format{4, false};
  const nic::Packet packet = packet_for(nic::opcode::kAcknowledge, 0, format);
  std::vector<uint8_t> f(128, 0xEE);
  const size_t length = writer_.write(packet, addresses_for(format), f.data(), f.size());
  ASSERT_EQ(length, 62u);
  const uint8_t* aeth = &f[14 + 20 + 8 + 12];
  EXPECT_EQ(aeth[0], nic::aeth::kNakSequenceError);
  EXPECT_EQ(load_be24(aeth + 1), 0x654321u);
  EXPECT_EQ(load_icrc(aeth + 4), reference_icrc(f, length, format));
}

TEST_F(FrameWriterTest, ShortFramesArePaddedWithZerosAfterTheIcrc) {
  const Format format{4, false};
  const nic::Packet packet = packet_for(nic::opcode::kSendOnly, 1, format);
  std::vector<uint8_t> f(128, 0xEE);
  // 14 + 20 + 8 + 12 + 4 (one byte, three pad) + 4 = 62: no padding needed; with zero payload
  // the frame is 58 bytes and needs two.
  ASSERT_EQ(writer_.write(packet, addresses_for(format), f.data(), f.size()), 62u);
  const nic::Packet empty = packet_for(nic::opcode::kSendOnly, 0, format);
  std::fill(f.begin(), f.end(), 0xEE);
  ASSERT_EQ(writer_.write(empty, addresses_for(format), f.data(), f.size()), 60u);
  EXPECT_EQ(f[58], 0);
  EXPECT_EQ(f[59], 0);
  EXPECT_EQ(f[60], 0xEE);
  EXPECT_EQ(load_icrc(&f[54]), reference_icrc(f, 60, format));
}

TEST_F(FrameWriterTest, GoldenCnpFromTheWriter) {
  // Spec 3.4's CNP: 22.22.22.8 -> 22.22.22.7, sport 56238, DestQP 0xD2, BECN, TOS 0x89.
  FrameAddresses addresses;
  addresses.src_ip = {22, 22, 22, 8};
  addresses.dst_ip = {22, 22, 22, 7};
  nic::Packet cnp;
  cnp.opcode = nic::opcode::kCnp;
  cnp.udp_source_port = 56238;
  cnp.dest_qpn = 0xD2;
  cnp.bth_flags = nic::bth_flag::kBecn;
  cnp.dscp = 0x89 >> 2;
  cnp.ecn = 0x89 & 3;
  std::vector<uint8_t> f(128);
  ASSERT_EQ(writer_.write(cnp, addresses, f.data(), f.size()), 74u);
  const uint8_t* ip = &f[14];
  const uint8_t golden[60] = {
      0x45, 0x89, 0x00, 0x3C, 0x98, 0xC6, 0x40, 0x00, 0x20, 0x11, 0x69, 0x27, 0x16, 0x16, 0x16,
      0x08, 0x16, 0x16, 0x16, 0x07, 0xDB, 0xAE, 0x12, 0xB7, 0x00, 0x28, 0x00, 0x00, 0x81, 0x00,
      0xFF, 0xFF, 0x40, 0x00, 0x00, 0xD2, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
      0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0xDA, 0xFC, 0x1B, 0xEF};
  // The writer's own bytes differ from the capture only in identification, TTL and checksum.
  for (size_t i = 0; i < 56; ++i) {
    if (i == 4 || i == 5 || i == 8 || i == 10 || i == 11) continue;
    EXPECT_EQ(ip[i], golden[i]) << "offset " << i;
  }
  EXPECT_EQ(load_icrc(ip + 56), icrc(ip, 56, 4));
  // TTL and checksum are masked; identification is not. With the capture's identification the
  // writer must produce the capture's ICRC.
  std::vector<uint8_t> same_id(ip, ip + 56);
  same_id[4] = 0x98;
  same_id[5] = 0xC6;
  EXPECT_EQ(icrc(same_id.data(), 56, 4), 0xEF1BFCDAu);
}

TEST_F(FrameWriterTest, AGivenDestinationQpTakesThePacketsPlace) {
  // A packet carries its QP's run number; the frame carries the wire number it is given, the
  // rest of the frame as with the packet's own number there.
  for (const Format& format : all_formats()) {
    const FrameAddresses addresses = addresses_for(format);
    nic::Packet packet = packet_for(nic::opcode::kWriteFirst, 512, format);
    packet.dest_qpn = 0x1234567;  // past 24 bits, as a run number may be
    nic::Packet as_wired = packet;
    as_wired.dest_qpn = 0x000101;
    std::vector<uint8_t> given(kPmtu + 128, 0xEE), wired(kPmtu + 128, 0xEE);
    const size_t length = writer_.write(packet, addresses, given.data(), given.size(), 0x101);
    ASSERT_GT(length, 0u);
    ASSERT_EQ(writer_.write(as_wired, addresses, wired.data(), wired.size()), length);
    EXPECT_EQ(given, wired) << format.name();
    std::vector<uint8_t> around(kPmtu + 128, 0xEE);
    ASSERT_EQ(writer_.write_around_payload(packet, addresses, around.data(), 0x101), length);
    const uint32_t headers = FrameWriter::header_bytes(packet, format.ip_version, format.vlan);
    EXPECT_TRUE(std::equal(around.begin(), around.begin() + headers, wired.begin()))
        << format.name();
  }
}

TEST_F(FrameWriterTest, WriteAroundPayloadWriteAndReferenceAgree) {
  std::mt19937 random(1234);
  std::vector<uint32_t> lengths = testing::interesting_payloads();
  for (int i = 0; i < 200; ++i) lengths.push_back(random() % (kPmtu + 1));
  for (const Format& format : all_formats()) {
    const FrameAddresses addresses = addresses_for(format);
    for (uint8_t op : all_opcodes()) {
      if (op > nic::opcode::kWriteOnlyWithImmediate) continue;
      for (uint32_t payload : lengths) {
        nic::Packet packet = packet_for(op, payload, format);
        packet.psn = static_cast<uint32_t>(random()) & nic::kPsnMask;
        packet.dest_qpn = static_cast<uint32_t>(random()) & nic::kPsnMask;
        std::vector<uint8_t> written(kPmtu + 128, 0xEE);
        const size_t length = writer_.write(packet, addresses, written.data(), written.size());
        ASSERT_GT(length, 0u);
        const uint32_t reference = reference_icrc(written, length, format);
        ASSERT_EQ(carried_icrc(written, format), reference)
            << format.name() << " op " << int(op) << " payload " << payload;

        // In-place: the payload region holds bytes that are NOT the pattern, so if the
        // writer read them the ICRC would differ, and if it wrote them they would change.
        const uint32_t headers = FrameWriter::header_bytes(packet, format.ip_version, format.vlan);
        const uint32_t padded_payload = (payload + 3) & ~3u;
        std::vector<uint8_t> in_place(kPmtu + 128, 0xEE);
        std::memset(in_place.data() + headers, 0x5C, padded_payload);
        const size_t in_place_length =
            writer_.write_around_payload(packet, addresses, in_place.data());
        ASSERT_EQ(in_place_length, length);
        for (uint32_t i = 0; i < padded_payload; ++i) {
          ASSERT_EQ(in_place[headers + i], 0x5C) << "payload byte " << i << " touched";
        }
        ASSERT_EQ(std::memcmp(in_place.data(), written.data(), headers), 0);
        ASSERT_EQ(std::memcmp(in_place.data() + headers + padded_payload,
                              written.data() + headers + padded_payload,
                              length - headers - padded_payload),
                  0);
        ASSERT_EQ(in_place[length], 0xEE);
      }
    }
  }
}

TEST_F(FrameWriterTest, ControlPacketsIcrcMatchesReference) {
  for (const Format& format : all_formats()) {
    for (uint8_t op : {nic::opcode::kAcknowledge, nic::opcode::kCnp}) {
      const nic::Packet packet = packet_for(op, 0, format);
      std::vector<uint8_t> f(256, 0xEE);
      const size_t length = writer_.write(packet, addresses_for(format), f.data(), f.size());
      ASSERT_GT(length, 0u);
      EXPECT_EQ(carried_icrc(f, format), reference_icrc(f, length, format)) << format.name();
    }
  }
}

TEST_F(FrameWriterTest, RefusesWhatItCannotWrite) {
  const Format format{4, false};
  const FrameAddresses addresses = addresses_for(format);
  std::vector<uint8_t> f(kPmtu + 256);
  const nic::Packet packet = packet_for(nic::opcode::kWriteMiddle, 1000, format);
  const size_t needed = 14 + 20 + 8 + 12 + 1000 + 4;
  EXPECT_EQ(writer_.write(packet, addresses, f.data(), needed - 1), 0u);
  EXPECT_EQ(writer_.write(packet, addresses, f.data(), needed), needed);

  nic::Packet too_long = packet_for(nic::opcode::kWriteMiddle, kPmtu + 1, format);
  EXPECT_EQ(writer_.write(too_long, addresses, f.data(), f.size()), 0u);
  EXPECT_EQ(writer_.write_around_payload(too_long, addresses, f.data()), 0u);

  nic::Packet unknown = packet;
  unknown.opcode = 0x1F;
  EXPECT_EQ(writer_.write(unknown, addresses, f.data(), f.size()), 0u);

  EXPECT_EQ(writer_.write_around_payload(packet_for(nic::opcode::kAcknowledge, 0, format),
                                         addresses, f.data()),
            0u);
  EXPECT_EQ(
      writer_.write_around_payload(packet_for(nic::opcode::kCnp, 0, format), addresses, f.data()),
      0u);

  FrameAddresses bad_version = addresses;
  bad_version.ip_version = 5;
  EXPECT_EQ(writer_.write(packet, bad_version, f.data(), f.size()), 0u);

  EXPECT_EQ(writer_.write(nic::pfc_frame(0, 0, 8, 1), addresses, f.data(), f.size()), 0u);
  EXPECT_EQ(writer_.write(nic::pfc_frame(0, 0, 7, 1), addresses, f.data(), 59), 0u);
}

TEST_F(FrameWriterTest, PfcPauseFrame) {
  FrameAddresses addresses = addresses_for({4, true});  // a VLAN id must not tag a PFC frame
  const nic::Packet pause = nic::pfc_frame(1, 1, 3, 0xABCD);
  std::vector<uint8_t> f(128, 0xEE);
  const size_t length = writer_.write(pause, addresses, f.data(), f.size());
  ASSERT_EQ(length, nic::frame_bytes(pause, {}) - nic::kFcsBytes);
  ASSERT_EQ(length, 60u);
  const std::vector<uint8_t> expected_head = {0x01, 0x80, 0xC2, 0x00, 0x00, 0x01,  // destination
                                              0x02, 0x00, 0x00, 0x00, 0x00, 0x0A,  // source
                                              0x88, 0x08,                          // MAC control
                                              0x01, 0x01,                          // PFC
                                              0x00, 0x08,  // class 3 enabled
                                              0,    0,    0,    0,    0,    0,    0xAB, 0xCD,
                                              0,    0,    0,    0,    0,    0,    0,    0};
  EXPECT_EQ(std::vector<uint8_t>(f.begin(), f.begin() + 34), expected_head);
  for (size_t i = 34; i < 60; ++i) EXPECT_EQ(f[i], 0) << i;
  EXPECT_EQ(f[60], 0xEE);
}

}  // namespace
}  // namespace etwire::frame

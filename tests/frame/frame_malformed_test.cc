// What the reader does with frames that are cut short, damaged, re-marked on the way, or not
// RoCE at all; and that no input whatsoever makes it read out of bounds.
#include <gtest/gtest.h>

#include <memory>
#include <random>
#include <vector>

#include "nic/frame/frame_reader.h"
#include "nic/frame/frame_writer.h"
#include "nic/frame/icrc.h"
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

class MalformedTest : public ::testing::Test {
 protected:
  std::vector<uint8_t> frame_for(const nic::Packet& packet, const Format& format) {
    std::vector<uint8_t> frame(kPmtu + 128);
    frame.resize(writer_.write(packet, addresses_for(format), frame.data(), frame.size()));
    return frame;
  }

  // Parses a copy in a heap block of exactly `length` bytes, so that the address sanitizer
  // reports any read past the end.
  FrameStatus parse_exact(const uint8_t* bytes, size_t length, ParsedFrame& parsed) {
    std::unique_ptr<uint8_t[]> copy(new uint8_t[length == 0 ? 1 : length]);
    std::copy(bytes, bytes + length, copy.get());
    return reader_.parse(length == 0 ? nullptr : copy.get(), length, parsed);
  }
  FrameStatus parse(const std::vector<uint8_t>& frame) {
    ParsedFrame parsed;
    return parse_exact(frame.data(), frame.size(), parsed);
  }

  PayloadPattern pattern_{kPmtu, kPmtu};
  FrameWriter writer_{pattern_};
  FrameReader reader_{pattern_};
};

size_t l2_bytes(const Format& format) {
  return format.vlan ? 18 : 14;
}

void fix_ipv4_checksum(std::vector<uint8_t>& frame, const Format& format) {
  uint8_t* ip = &frame[l2_bytes(format)];
  store_be16(ip + 10, ipv4_header_checksum(ip));
}

// Recomputes the ICRC after a test edited covered bytes on purpose.
void fix_icrc(std::vector<uint8_t>& frame, const Format& format) {
  uint8_t* ip = &frame[l2_bytes(format)];
  const size_t ip_total = format.ip_version == 6 ? 40u + load_be16(ip + 4) : load_be16(ip + 2);
  store_icrc(ip + ip_total - 4, icrc(ip, ip_total - 4, format.ip_version));
}

TEST_F(MalformedTest, TruncatedAtEveryLength) {
  for (const Format& format : all_formats()) {
    for (uint8_t op : all_opcodes()) {
      const nic::Packet packet = packet_for(op, 37, format);
      const std::vector<uint8_t> frame = frame_for(packet, format);
      const uint8_t* ip = &frame[l2_bytes(format)];
      const size_t ip_end =
          l2_bytes(format) + (format.ip_version == 6 ? 40u + load_be16(ip + 4) : load_be16(ip + 2));
      for (size_t length = 0; length <= frame.size(); ++length) {
        ParsedFrame parsed;
        const FrameStatus status = parse_exact(frame.data(), length, parsed);
        ASSERT_EQ(status, length < ip_end ? FrameStatus::kTruncated : FrameStatus::kRoce)
            << format.name() << " op " << int(op) << " length " << length;
      }
    }
  }
  const nic::Packet pause = nic::pfc_frame(0, 0, 2, 7);
  std::vector<uint8_t> frame(60);
  ASSERT_EQ(writer_.write(pause, {}, frame.data(), frame.size()), 60u);
  for (size_t length = 0; length <= 60; ++length) {
    ParsedFrame parsed;
    EXPECT_EQ(parse_exact(frame.data(), length, parsed),
              length < 34 ? FrameStatus::kTruncated : FrameStatus::kPfc)
        << length;
  }
}

TEST_F(MalformedTest, AnyFlippedCoveredBitIsABadIcrc) {
  for (const Format& format : all_formats()) {
    const nic::Packet packet = packet_for(nic::opcode::kWriteFirst, 1001, format);
    const std::vector<uint8_t> frame = frame_for(packet, format);
    const uint32_t headers = FrameWriter::header_bytes(packet, format.ip_version, format.vlan);
    // Payload, pad, a header field (PSN), and the ICRC itself.
    for (size_t offset : {size_t{headers}, size_t{headers + 500}, size_t{headers + 1000},
                          size_t{headers + 1003}, size_t{headers - 16 - 1}, frame.size() - 1}) {
      for (int bit = 0; bit < 8; ++bit) {
        std::vector<uint8_t> damaged = frame;
        damaged[offset] ^= static_cast<uint8_t>(1 << bit);
        EXPECT_EQ(parse(damaged), FrameStatus::kBadIcrc)
            << format.name() << " offset " << offset << " bit " << bit;
      }
    }
  }
  EXPECT_GT(reader_.counters().bad_icrc, 0u);
}

TEST_F(MalformedTest, ReMarkingMaskedFieldsKeepsTheIcrc) {
  for (const Format& format : all_formats()) {
    const nic::Packet packet = packet_for(nic::opcode::kWriteMiddle, 1024, format);
    const std::vector<uint8_t> frame = frame_for(packet, format);
    const size_t l2 = l2_bytes(format);

    // A switch marks CE and decrements the TTL / hop limit (fixing the IPv4 checksum).
    std::vector<uint8_t> remarked = frame;
    if (format.ip_version == 4) {
      remarked[l2 + 1] |= nic::ecn::kCe;
      remarked[l2 + 8] -= 1;
      fix_ipv4_checksum(remarked, format);
    } else {
      remarked[l2 + 1] |= nic::ecn::kCe << 4;
      remarked[l2 + 7] -= 1;
      remarked[l2 + 3] = 0x77;  // flow label
    }
    ParsedFrame parsed;
    ASSERT_EQ(parse_exact(remarked.data(), remarked.size(), parsed), FrameStatus::kRoce)
        << format.name();
    EXPECT_EQ(parsed.packet.ecn, nic::ecn::kCe);
    EXPECT_EQ(parsed.packet.dscp, packet.dscp);
    EXPECT_EQ(parsed.packet.psn, packet.psn);

    // A UDP checksum and a BECN bit set on the way.
    std::vector<uint8_t> becn = frame;
    const size_t udp = l2 + (format.ip_version == 6 ? 40 : 20);
    store_be16(&becn[udp + 6], 0x1234);
    becn[udp + 8 + 4] |= kBthBecnBit;
    ASSERT_EQ(parse_exact(becn.data(), becn.size(), parsed), FrameStatus::kRoce) << format.name();
    EXPECT_EQ(parsed.packet.bth_flags, packet.bth_flags | nic::bth_flag::kBecn);
  }
}

TEST_F(MalformedTest, UnknownOpcode) {
  const Format format{4, false};
  std::vector<uint8_t> frame = frame_for(packet_for(nic::opcode::kSendMiddle, 64, format), format);
  frame[14 + 20 + 8] = 0x1F;
  EXPECT_EQ(parse(frame), FrameStatus::kBadIcrc);
  fix_icrc(frame, format);
  EXPECT_EQ(parse(frame), FrameStatus::kUnknownOpcode);
  for (uint8_t op : {0x0C, 0x10, 0x12, 0x64, 0x80, 0xFF}) {
    frame[14 + 20 + 8] = op;
    fix_icrc(frame, format);
    EXPECT_EQ(parse(frame), FrameStatus::kUnknownOpcode) << int(op);
  }
  EXPECT_EQ(reader_.counters().unknown_opcode, 7u);
  EXPECT_EQ(reader_.counters().bad_icrc, 1u);
}

TEST_F(MalformedTest, BadHeaders) {
  const Format v4{4, false}, v6{6, false};
  const std::vector<uint8_t> frame4 = frame_for(packet_for(nic::opcode::kWriteMiddle, 100, v4), v4);
  const std::vector<uint8_t> frame6 = frame_for(packet_for(nic::opcode::kWriteMiddle, 100, v6), v6);
  auto edited = [](std::vector<uint8_t> frame, size_t offset, uint8_t value, bool checksum) {
    frame[offset] = value;
    if (checksum) store_be16(&frame[14 + 10], ipv4_header_checksum(&frame[14]));
    return frame;
  };
  EXPECT_EQ(parse(edited(frame4, 14 + 11, frame4[14 + 11] ^ 1, false)), FrameStatus::kBadHeader);
  EXPECT_EQ(parse(edited(frame4, 14, 0x46, true)), FrameStatus::kBadHeader);  // IHL 6
  EXPECT_EQ(parse(edited(frame4, 14, 0x65, true)), FrameStatus::kBadHeader);  // version 6
  EXPECT_EQ(parse(edited(frame6, 14, 0x40, false)), FrameStatus::kBadHeader);
  // IP total length shorter than IP + UDP.
  {
    std::vector<uint8_t> frame = frame4;
    store_be16(&frame[14 + 2], 27);
    store_be16(&frame[14 + 10], ipv4_header_checksum(&frame[14]));
    EXPECT_EQ(parse(frame), FrameStatus::kBadHeader);
  }
  // UDP length disagrees with the IP length.
  {
    std::vector<uint8_t> frame = frame4;
    store_be16(&frame[14 + 20 + 4], load_be16(&frame[14 + 20 + 4]) - 4);
    EXPECT_EQ(parse(frame), FrameStatus::kBadHeader);
    frame = frame6;
    store_be16(&frame[14 + 40 + 4], load_be16(&frame[14 + 40 + 4]) + 4);
    EXPECT_EQ(parse(frame), FrameStatus::kBadHeader);
  }
  // Too short for a BTH and ICRC, or for the opcode's extension header.
  {
    std::vector<uint8_t> frame = frame4;
    store_be16(&frame[14 + 2], 20 + 8 + 12);
    store_be16(&frame[14 + 10], ipv4_header_checksum(&frame[14]));
    store_be16(&frame[14 + 20 + 4], 8 + 12);
    EXPECT_EQ(parse(frame), FrameStatus::kBadHeader);
    const std::vector<uint8_t> ack = frame_for(packet_for(nic::opcode::kSendOnly, 0, v4), v4);
    std::vector<uint8_t> as_write_first = ack;
    as_write_first[14 + 20 + 8] = nic::opcode::kWriteFirst;  // needs 16 bytes of RETH
    EXPECT_EQ(parse(as_write_first), FrameStatus::kBadHeader);
  }
  // Payload not a multiple of four, and PadCnt beyond the payload.
  {
    std::vector<uint8_t> frame = frame4;
    store_be16(&frame[14 + 2], load_be16(&frame[14 + 2]) - 1);
    store_be16(&frame[14 + 10], ipv4_header_checksum(&frame[14]));
    store_be16(&frame[14 + 20 + 4], load_be16(&frame[14 + 20 + 4]) - 1);
    EXPECT_EQ(parse(frame), FrameStatus::kBadHeader);
    const std::vector<uint8_t> empty = frame_for(packet_for(nic::opcode::kSendOnly, 0, v4), v4);
    std::vector<uint8_t> padded = empty;
    padded[14 + 20 + 8 + 1] |= 2 << kBthPadShift;
    EXPECT_EQ(parse(padded), FrameStatus::kBadHeader);
  }
  EXPECT_EQ(reader_.counters().bad_header, 11u);
}

TEST_F(MalformedTest, NotRoce) {
  const Format v4{4, false}, v6{6, true};
  const std::vector<uint8_t> frame4 = frame_for(packet_for(nic::opcode::kWriteMiddle, 100, v4), v4);
  const std::vector<uint8_t> frame6 = frame_for(packet_for(nic::opcode::kWriteMiddle, 100, v6), v6);
  {
    std::vector<uint8_t> arp = frame4;
    store_be16(&arp[12], 0x0806);
    EXPECT_EQ(parse(arp), FrameStatus::kNotRoce);
    std::vector<uint8_t> qinq = frame6;
    store_be16(&qinq[16], 0x8100);
    EXPECT_EQ(parse(qinq), FrameStatus::kNotRoce);
  }
  {
    std::vector<uint8_t> tcp = frame4;
    tcp[14 + 9] = 6;
    store_be16(&tcp[14 + 10], ipv4_header_checksum(&tcp[14]));
    EXPECT_EQ(parse(tcp), FrameStatus::kNotRoce);
    std::vector<uint8_t> fragment = frame4;
    store_be16(&fragment[14 + 6], 0x2000);  // more fragments
    store_be16(&fragment[14 + 10], ipv4_header_checksum(&fragment[14]));
    EXPECT_EQ(parse(fragment), FrameStatus::kNotRoce);
    std::vector<uint8_t> dns = frame4;
    store_be16(&dns[14 + 20 + 2], 53);
    EXPECT_EQ(parse(dns), FrameStatus::kNotRoce);
  }
  {
    std::vector<uint8_t> tcp6 = frame6;
    tcp6[18 + 6] = 6;
    EXPECT_EQ(parse(tcp6), FrameStatus::kNotRoce);
    std::vector<uint8_t> other_port = frame6;
    store_be16(&other_port[18 + 40 + 2], 4792);
    EXPECT_EQ(parse(other_port), FrameStatus::kNotRoce);
  }
  {
    std::vector<uint8_t> pause(60);
    ASSERT_EQ(writer_.write(nic::pfc_frame(0, 0, 1, 1), {}, pause.data(), 60), 60u);
    store_be16(&pause[14], 0x0001);  // 802.3x PAUSE, not PFC
    EXPECT_EQ(parse(pause), FrameStatus::kNotRoce);
  }
  EXPECT_EQ(reader_.counters().not_roce, 8u);
}

// Random inputs of three kinds: bytes, valid frames with damage, and a plausible Ethernet/IP/UDP
// prefix followed by noise (to get past the early checks). None may crash or read out of bounds.
TEST_F(MalformedTest, FuzzNeverCrashes) {
  std::mt19937_64 random(20240611);
  std::vector<std::vector<uint8_t>> valid;
  for (const Format& format : all_formats()) {
    for (uint8_t op : all_opcodes()) {
      for (uint32_t payload : {0u, 3u, 64u, 300u}) {
        valid.push_back(frame_for(packet_for(op, payload, format), format));
      }
    }
  }
  valid.push_back(std::vector<uint8_t>(60));
  writer_.write(nic::pfc_frame(0, 0, 4, 9), {}, valid.back().data(), 60);

  constexpr int kInputs = 200000;
  uint64_t seen[7] = {};
  std::vector<uint8_t> input;
  for (int i = 0; i < kInputs; ++i) {
    const int kind = static_cast<int>(random() % 3);
    if (kind == 0) {
      input.resize(random() % 200);
      for (auto& byte : input) byte = static_cast<uint8_t>(random());
    } else if (kind == 1) {
      input = valid[random() % valid.size()];
      const int flips = static_cast<int>(random() % 4);
      for (int f = 0; f < flips && !input.empty(); ++f) {
        input[random() % input.size()] ^= static_cast<uint8_t>(1u << (random() % 8));
      }
      if (random() % 2) {
        input[random() % input.size()] = static_cast<uint8_t>(random());
      }
      if (random() % 3 == 0) input.resize(random() % (input.size() + 1));
      if (random() % 5 == 0) input.resize(input.size() + random() % 16, 0);
    } else {
      const std::vector<uint8_t>& base = valid[random() % valid.size()];
      const size_t keep = random() % std::min<size_t>(base.size(), 80);
      input.assign(base.begin(), base.begin() + static_cast<std::ptrdiff_t>(keep));
      input.resize(keep + random() % 200);
      for (size_t b = keep; b < input.size(); ++b) input[b] = static_cast<uint8_t>(random());
    }
    ParsedFrame parsed;
    const FrameStatus status = parse_exact(input.data(), input.size(), parsed);
    ASSERT_LT(static_cast<size_t>(status), 7u);
    ++seen[static_cast<size_t>(status)];
    if (status == FrameStatus::kRoce) {
      ASSERT_LE(parsed.packet.payload_bytes, input.size());
    }
  }
  const FrameErrorCounters& counters = reader_.counters();
  EXPECT_EQ(counters.not_roce, seen[static_cast<size_t>(FrameStatus::kNotRoce)]);
  EXPECT_EQ(counters.truncated, seen[static_cast<size_t>(FrameStatus::kTruncated)]);
  EXPECT_EQ(counters.bad_header, seen[static_cast<size_t>(FrameStatus::kBadHeader)]);
  EXPECT_EQ(counters.bad_icrc, seen[static_cast<size_t>(FrameStatus::kBadIcrc)]);
  EXPECT_EQ(counters.unknown_opcode, seen[static_cast<size_t>(FrameStatus::kUnknownOpcode)]);
  // The inputs reach every check (an unknown opcode needs a matching ICRC, which damage does not
  // produce: UnknownOpcode covers it). Some damaged frames are still accepted: only masked
  // fields, padding or reserved bits were hit.
  for (FrameStatus status :
       {FrameStatus::kRoce, FrameStatus::kPfc, FrameStatus::kNotRoce, FrameStatus::kTruncated,
        FrameStatus::kBadHeader, FrameStatus::kBadIcrc}) {
    EXPECT_GT(seen[static_cast<size_t>(status)], 0u) << static_cast<int>(status);
  }
}

}  // namespace
}  // namespace etwire::frame

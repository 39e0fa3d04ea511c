#include "nic/frame/icrc.h"

#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

namespace etwire::frame {
namespace {

std::vector<uint8_t> from_hex(const std::string& hex) {
  std::vector<uint8_t> bytes;
  for (size_t i = 0; i + 1 < hex.size(); i += 2) {
    bytes.push_back(static_cast<uint8_t>(std::stoul(hex.substr(i, 2), nullptr, 16)));
  }
  return bytes;
}

// The spec's golden CNP (3.4), from the IP header through the ICRC.
std::vector<uint8_t> golden_cnp() {
  return from_hex(
      "4589003C98C640002011692716161608"
      "16161607DBAE12B7002800008100FFFF"
      "400000D2000000000000000000000000"
      "0000000000000000DAFC1BEF");
}

// Bit at a time, straight from the definition: the yardstick for the table-driven code.
uint32_t bitwise_update(uint32_t reg, const uint8_t* data, size_t bytes) {
  for (size_t i = 0; i < bytes; ++i) {
    reg ^= data[i];
    for (int bit = 0; bit < 8; ++bit) reg = (reg >> 1) ^ ((reg & 1) ? 0xEDB88320u : 0);
  }
  return reg;
}

TEST(Crc32, CheckValue) {
  const std::string check = "123456789";
  EXPECT_EQ(crc32(reinterpret_cast<const uint8_t*>(check.data()), check.size()), 0xCBF43926u);
  EXPECT_EQ(crc32(nullptr, 0), 0u);
}

TEST(Crc32, SlicingMatchesBitwiseAtEveryLengthAndAlignment) {
  std::mt19937 random(7);
  std::vector<uint8_t> data(300);
  for (auto& byte : data) byte = static_cast<uint8_t>(random());
  for (size_t offset = 0; offset < 8; ++offset) {
    for (size_t length = 0; offset + length <= data.size(); ++length) {
      const uint32_t start = static_cast<uint32_t>(random());
      ASSERT_EQ(crc32_update(start, data.data() + offset, length),
                bitwise_update(start, data.data() + offset, length))
          << "offset " << offset << " length " << length;
    }
  }
}

TEST(Crc32, SeedIsTheRegisterAfterEightOnes) {
  const uint8_t ones[8] = {0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF};
  EXPECT_EQ(crc32_update(0xFFFFFFFF, ones, 8), kIcrcSeed);
}

TEST(CrcShift, EqualsUpdateOverZeroBytes) {
  std::mt19937 random(11);
  const std::vector<uint64_t> lengths = {0, 1, 2, 3, 4, 7, 8, 63, 64, 100, 1024, 4096, 4099, 65537};
  std::vector<uint8_t> zeros(65537, 0);
  for (uint64_t n : lengths) {
    const CrcShift shift(n);
    for (int trial = 0; trial < 20; ++trial) {
      const uint32_t reg = static_cast<uint32_t>(random());
      ASSERT_EQ(shift(reg), crc32_update(reg, zeros.data(), n)) << "n " << n;
    }
  }
}

TEST(CrcShift, ComposeAddsLengths) {
  const CrcShift a(37), b(1000), sum(1037);
  const CrcShift composed = CrcShift::compose(a, b);
  std::mt19937 random(3);
  for (int trial = 0; trial < 100; ++trial) {
    const uint32_t reg = static_cast<uint32_t>(random());
    EXPECT_EQ(composed(reg), sum(reg));
  }
  const CrcShift identity;
  EXPECT_EQ(identity(0x12345678u), 0x12345678u);
}

TEST(CrcShift, HugeLengthsByRepeatedSquaring) {
  // 2^33 + 5 zero bytes: not checkable by brute force, but shifting by 2^32 twice then 5 must
  // agree.
  const CrcShift big((uint64_t{1} << 33) + 5);
  const CrcShift half(uint64_t{1} << 32), five(5);
  const uint32_t reg = 0x9ABCDEF0u;
  EXPECT_EQ(big(reg), five(half(half(reg))));
}

TEST(CrcLinearity, ConcatenationIsShiftXorContribution) {
  std::mt19937 random(5);
  std::vector<uint8_t> data(2000);
  for (auto& byte : data) byte = static_cast<uint8_t>(random());
  for (size_t split : {size_t{0}, size_t{1}, size_t{60}, size_t{999}, size_t{2000}}) {
    const size_t tail = data.size() - split;
    const uint32_t head = crc32_update(kIcrcSeed, data.data(), split);
    const uint32_t combined = CrcShift(tail)(head) ^ crc32_update(0, data.data() + split, tail);
    EXPECT_EQ(combined, crc32_update(kIcrcSeed, data.data(), data.size())) << split;
  }
}

TEST(Icrc, GoldenCnpVector) {
  const std::vector<uint8_t> frame = golden_cnp();
  ASSERT_EQ(frame.size(), 60u);
  const uint32_t value = icrc(frame.data(), frame.size() - 4, 4);
  EXPECT_EQ(value, 0xEF1BFCDAu);
  uint8_t wire[4];
  store_icrc(wire, value);
  EXPECT_EQ(wire[0], 0xDA);
  EXPECT_EQ(wire[1], 0xFC);
  EXPECT_EQ(wire[2], 0x1B);
  EXPECT_EQ(wire[3], 0xEF);
  EXPECT_EQ(load_icrc(frame.data() + 56), value);
}

TEST(Icrc, GoldenCnpIsPlainCrc32OverMaskedBytes) {
  // Spec 3.4's own check: zlib's CRC-32 over 8 x FF and the masked headers and payload.
  std::vector<uint8_t> covered(8, 0xFF);
  const std::vector<uint8_t> frame = golden_cnp();
  covered.insert(covered.end(), frame.begin(), frame.end() - 4);
  covered[8 + 1] = 0xFF;                     // TOS
  covered[8 + 8] = 0xFF;                     // TTL
  covered[8 + 10] = covered[8 + 11] = 0xFF;  // IP checksum
  covered[8 + 26] = covered[8 + 27] = 0xFF;  // UDP checksum
  covered[8 + 32] = 0xFF;                    // BTH byte 4
  EXPECT_EQ(crc32(covered.data(), covered.size()), 0xEF1BFCDAu);
}

TEST(Icrc, MaskedFieldsDoNotMatterOthersDo) {
  const std::vector<uint8_t> golden = golden_cnp();
  const uint32_t reference = icrc(golden.data(), 56, 4);
  for (size_t offset : {1, 8, 10, 11, 26, 27, 32}) {
    std::vector<uint8_t> changed = golden;
    changed[offset] ^= 0x5A;
    EXPECT_EQ(icrc(changed.data(), 56, 4), reference) << "masked offset " << offset;
  }
  for (size_t offset : {0, 2, 4, 5, 9, 12, 20, 24, 28, 29, 33, 36, 40, 55}) {
    std::vector<uint8_t> changed = golden;
    changed[offset] ^= 0x01;
    EXPECT_NE(icrc(changed.data(), 56, 4), reference) << "covered offset " << offset;
  }
}

TEST(Icrc, Ipv6MasksTrafficClassFlowLabelAndHopLimitButNotVersion) {
  std::vector<uint8_t> packet(40 + 8 + 12 + 4, 0);
  packet[0] = 0x60;
  packet[4] = 0x00;
  packet[5] = 8 + 12 + 4;
  packet[6] = 17;
  packet[7] = 64;
  packet[42] = 0x12;
  packet[43] = 0xB7;
  packet[48] = 0x04;
  const uint32_t reference = icrc(packet.data(), packet.size(), 6);
  for (size_t offset : {1, 2, 3, 7, 46, 47, 52}) {
    std::vector<uint8_t> changed = packet;
    changed[offset] ^= 0xA5;
    EXPECT_EQ(icrc(changed.data(), changed.size(), 6), reference) << offset;
  }
  std::vector<uint8_t> traffic_class = packet;
  traffic_class[0] |= 0x0F;
  EXPECT_EQ(icrc(traffic_class.data(), traffic_class.size(), 6), reference);
  std::vector<uint8_t> version = packet;
  version[0] ^= 0x10;
  EXPECT_NE(icrc(version.data(), version.size(), 6), reference);
}

}  // namespace
}  // namespace etwire::frame

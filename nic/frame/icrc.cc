#include "nic/frame/icrc.h"

#include <bit>
#include <cstring>
#include <vector>

namespace etwire::frame {

namespace {

constexpr uint32_t kPolynomial = 0xEDB88320;

using SliceTables = std::array<std::array<uint32_t, 256>, 8>;

// tables[0] is the classic byte table; tables[k][b] is byte b's effect after k further zero
// bytes, so eight bytes fold into the register with eight independent lookups.
constexpr SliceTables make_slice_tables() {
  SliceTables tables{};
  for (uint32_t b = 0; b < 256; ++b) {
    uint32_t reg = b;
    for (int bit = 0; bit < 8; ++bit) reg = (reg >> 1) ^ ((reg & 1) ? kPolynomial : 0);
    tables[0][b] = reg;
  }
  for (size_t k = 1; k < 8; ++k) {
    for (uint32_t b = 0; b < 256; ++b) {
      const uint32_t prev = tables[k - 1][b];
      tables[k][b] = (prev >> 8) ^ tables[0][prev & 0xFF];
    }
  }
  return tables;
}

constexpr SliceTables kSlice = make_slice_tables();

constexpr uint32_t update_bytewise(uint32_t reg, const uint8_t* data, size_t bytes) {
  for (size_t i = 0; i < bytes; ++i) reg = (reg >> 8) ^ kSlice[0][(reg ^ data[i]) & 0xFF];
  return reg;
}

constexpr uint32_t seed_after_lrh_stand_in() {
  constexpr uint8_t ones[8] = {0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF};
  return update_bytewise(0xFFFFFFFF, ones, 8);
}
static_assert(seed_after_lrh_stand_in() == kIcrcSeed);

inline uint32_t load_le32(const uint8_t* p) {
  uint32_t value;
  std::memcpy(&value, p, 4);
  return std::endian::native == std::endian::little ? value : __builtin_bswap32(value);
}

uint32_t shift_one_byte(uint32_t reg) {
  return (reg >> 8) ^ kSlice[0][reg & 0xFF];
}

}  // namespace

uint32_t crc32_update(uint32_t reg, const uint8_t* data, size_t bytes) {
  while (bytes >= 8) {
    const uint32_t lo = load_le32(data) ^ reg;
    const uint32_t hi = load_le32(data + 4);
    reg = kSlice[7][lo & 0xFF] ^ kSlice[6][(lo >> 8) & 0xFF] ^ kSlice[5][(lo >> 16) & 0xFF] ^
          kSlice[4][lo >> 24] ^ kSlice[3][hi & 0xFF] ^ kSlice[2][(hi >> 8) & 0xFF] ^
          kSlice[1][(hi >> 16) & 0xFF] ^ kSlice[0][hi >> 24];
    data += 8;
    bytes -= 8;
  }
  return update_bytewise(reg, data, bytes);
}

uint32_t crc32_update_be_words(uint32_t reg, const uint32_t* words, size_t count) {
  // A word's wire bytes, taken least significant first as the slicing step takes them, make its
  // byte swap, whatever the host's byte order.
  size_t i = 0;
  for (; i + 2 <= count; i += 2) {
    const uint32_t lo = __builtin_bswap32(words[i]) ^ reg;
    const uint32_t hi = __builtin_bswap32(words[i + 1]);
    reg = kSlice[7][lo & 0xFF] ^ kSlice[6][(lo >> 8) & 0xFF] ^ kSlice[5][(lo >> 16) & 0xFF] ^
          kSlice[4][lo >> 24] ^ kSlice[3][hi & 0xFF] ^ kSlice[2][(hi >> 8) & 0xFF] ^
          kSlice[1][(hi >> 16) & 0xFF] ^ kSlice[0][hi >> 24];
  }
  if (i < count) {
    const uint32_t x = __builtin_bswap32(words[i]) ^ reg;
    reg = kSlice[3][x & 0xFF] ^ kSlice[2][(x >> 8) & 0xFF] ^ kSlice[1][(x >> 16) & 0xFF] ^
          kSlice[0][x >> 24];
  }
  return reg;
}

uint32_t crc32(const uint8_t* data, size_t bytes) {
  return ~crc32_update(0xFFFFFFFF, data, bytes);
}

CrcShift::CrcShift() {
  for (uint32_t k = 0; k < 4; ++k) {
    for (uint32_t v = 0; v < 256; ++v) tables_[k][v] = v << (8 * k);
  }
}

CrcShift::CrcShift(uint64_t zero_bytes) : CrcShift() {
  if (zero_bytes == 0) return;
  CrcShift power;  // the shift over 2^i bytes as i walks the bits of zero_bytes
  for (uint32_t k = 0; k < 4; ++k) {
    for (uint32_t v = 0; v < 256; ++v) power.tables_[k][v] = shift_one_byte(v << (8 * k));
  }
  bool identity = true;
  while (true) {
    if (zero_bytes & 1) {
      *this = identity ? power : compose(*this, power);
      identity = false;
    }
    zero_bytes >>= 1;
    if (zero_bytes == 0) break;
    power = compose(power, power);
  }
}

CrcShift CrcShift::compose(const CrcShift& first, const CrcShift& second) {
  CrcShift result;
  for (uint32_t k = 0; k < 4; ++k) {
    for (uint32_t v = 0; v < 256; ++v) result.tables_[k][v] = second(first(v << (8 * k)));
  }
  return result;
}

void mask_icrc_fields(uint8_t* ip_header, size_t bytes, uint8_t ip_version) {
  auto set = [&](size_t offset, uint8_t value) {
    if (offset < bytes) ip_header[offset] = value;
  };
  size_t udp = 0;
  if (ip_version == 6) {
    // Traffic class and flow label: everything of the first word but the version nibble.
    if (bytes > 0) ip_header[0] |= 0x0F;
    set(1, 0xFF);
    set(2, 0xFF);
    set(3, 0xFF);
    set(7, 0xFF);  // hop limit
    udp = 40;
  } else {
    set(1, 0xFF);  // TOS
    set(8, 0xFF);  // TTL
    set(10, 0xFF);
    set(11, 0xFF);  // header checksum
    udp = 20;
  }
  set(udp + 6, 0xFF);
  set(udp + 7, 0xFF);      // UDP checksum
  set(udp + 8 + 4, 0xFF);  // BTH byte 4: FECN, BECN, reserved
}

uint32_t icrc(const uint8_t* ip_header, size_t bytes, uint8_t ip_version) {
  std::vector<uint8_t> masked(ip_header, ip_header + bytes);
  mask_icrc_fields(masked.data(), bytes, ip_version);
  return icrc_from_register(update_bytewise(kIcrcSeed, masked.data(), bytes));
}

}  // namespace etwire::frame

// CRC-32 (IEEE 802.3, reflected polynomial 0xEDB88320) building blocks and the RoCEv2 invariant
// CRC (spec 3.4).
//
// Everything here works on the raw CRC register: no initial value, no final inversion. The
// register is linear over GF(2) in both the starting register and the data, which is what the
// fast path builds on: for data A followed by B,
//   update(r, A || B) = shift_|B|(update(r, A)) XOR update(0, B)
// so a payload whose update(0, .) is known in advance costs one shift, whatever its length.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>

namespace etwire::frame {

// Advances the raw register over `bytes` bytes of data (slicing-by-8).
uint32_t crc32_update(uint32_t reg, const uint8_t* data, size_t bytes);

// The same over header words held as numbers, each going on the wire most significant byte first
// (as IP/UDP/BTH fields are defined). Headers assembled in registers feed the CRC without a trip
// through memory, where byte-wise stores read back as wider loads would stall store forwarding.
uint32_t crc32_update_be_words(uint32_t reg, const uint32_t* words, size_t count);

// The standard CRC-32 (as zlib's crc32()): initial register all ones, final inversion.
uint32_t crc32(const uint8_t* data, size_t bytes);

// A linear map on the register: "advance over N zero bytes", applied as four table lookups (one
// per register byte). Composition of two shifts is a shift, so any N is built by squaring.
class CrcShift {
 public:
  CrcShift();  // N = 0: the identity
  explicit CrcShift(uint64_t zero_bytes);

  uint32_t operator()(uint32_t reg) const {
    return tables_[0][reg & 0xFF] ^ tables_[1][(reg >> 8) & 0xFF] ^ tables_[2][(reg >> 16) & 0xFF] ^
           tables_[3][reg >> 24];
  }

  // The shift that applies `first` and then `second`.
  static CrcShift compose(const CrcShift& first, const CrcShift& second);

 private:
  std::array<std::array<uint32_t, 256>, 4> tables_;
};

// The ICRC starts from the all-ones register advanced over eight 0xFF bytes, the stand-in for the
// InfiniBand LRH that RoCEv2 does not carry.
inline constexpr uint32_t kIcrcSeed = 0xDEBB20E3;

// Sets the fields that the ICRC treats as all ones (IPv4 TOS, TTL, header checksum; IPv6
// traffic class, flow label, hop limit; UDP checksum; BTH byte 4), for a copy of the bytes from
// the IP header on. Only positions below `bytes` are touched.
void mask_icrc_fields(uint8_t* ip_header, size_t bytes, uint8_t ip_version);

// mask_icrc_fields for covered headers held as big-endian words (crc32_update_be_words), at
// least IP + UDP + two BTH words of them.
inline void mask_icrc_words(uint32_t* words, uint8_t ip_version) {
  size_t udp = 0;
  if (ip_version == 6) {
    words[0] |= 0x0FFFFFFFu;  // traffic class, flow label
    words[1] |= 0xFFu;        // hop limit
    udp = 10;
  } else {
    words[0] |= 0x00FF0000u;  // TOS
    words[2] |= 0xFF00FFFFu;  // TTL, header checksum
    udp = 5;
  }
  words[udp + 1] |= 0xFFFFu;      // UDP checksum
  words[udp + 3] |= 0xFF000000u;  // BTH byte 4
}

// The reference ICRC over [IP header .. end of pad] (`bytes` long, the ICRC itself excluded),
// with the masking rules: simple and slow, for tests and for frames whose header layout the fast
// paths do not know (unknown opcodes on receive). The value
// is the CRC-32 as a number; the wire carries it least significant byte first (store_icrc), so
// the spec's golden CNP gives 0xEF1BFCDA, on the wire DA FC 1B EF.
uint32_t icrc(const uint8_t* ip_header, size_t bytes, uint8_t ip_version);

// The ICRC from a raw register advanced from kIcrcSeed over the covered bytes.
inline uint32_t icrc_from_register(uint32_t reg) {
  return ~reg;
}

inline void store_icrc(uint8_t* out, uint32_t value) {
  out[0] = static_cast<uint8_t>(value);
  out[1] = static_cast<uint8_t>(value >> 8);
  out[2] = static_cast<uint8_t>(value >> 16);
  out[3] = static_cast<uint8_t>(value >> 24);
}

inline uint32_t load_icrc(const uint8_t* in) {
  return static_cast<uint32_t>(in[0]) | (static_cast<uint32_t>(in[1]) << 8) |
         (static_cast<uint32_t>(in[2]) << 16) | (static_cast<uint32_t>(in[3]) << 24);
}

}  // namespace etwire::frame

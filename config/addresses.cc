#include "config/addresses.h"

#include <arpa/inet.h>
#include <fmt/format.h>

#include <cctype>
#include <charconv>

namespace etwire::config {

namespace {

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  return -1;
}

// Adds `offset` to a big-endian byte array in place; false on overflow.
template <size_t N>
bool add_big_endian(std::array<uint8_t, N>& bytes, size_t width, uint64_t offset) {
  uint64_t carry = offset;
  for (size_t i = N; i-- > N - width && carry != 0;) {
    uint64_t sum = bytes[i] + (carry & 0xFF);
    bytes[i] = static_cast<uint8_t>(sum);
    carry = (carry >> 8) + (sum >> 8);
  }
  return carry == 0;
}

}  // namespace

std::optional<MacAddress> MacAddress::parse(std::string_view text) {
  if (text.size() != 17) return std::nullopt;
  MacAddress mac;
  char separator = text[2];
  if (separator != ':' && separator != '-') return std::nullopt;
  for (size_t i = 0; i < 6; ++i) {
    size_t at = i * 3;
    if (i > 0 && text[at - 1] != separator) return std::nullopt;
    int hi = hex_value(text[at]);
    int lo = hex_value(text[at + 1]);
    if (hi < 0 || lo < 0) return std::nullopt;
    mac.bytes[i] = static_cast<uint8_t>(hi * 16 + lo);
  }
  return mac;
}

std::string MacAddress::to_string() const {
  return fmt::format("{:02x}:{:02x}:{:02x}:{:02x}:{:02x}:{:02x}", bytes[0], bytes[1], bytes[2],
                     bytes[3], bytes[4], bytes[5]);
}

bool MacAddress::is_zero() const {
  for (uint8_t b : bytes) {
    if (b != 0) return false;
  }
  return true;
}

std::optional<MacAddress> MacAddress::plus(uint64_t offset) const {
  MacAddress out = *this;
  if (!add_big_endian(out.bytes, 6, offset)) return std::nullopt;
  return out;
}

std::optional<Ipv4Address> Ipv4Address::parse(std::string_view text) {
  uint32_t value = 0;
  for (int part = 0; part < 4; ++part) {
    if (part > 0) {
      if (text.empty() || text.front() != '.') return std::nullopt;
      text.remove_prefix(1);
    }
    size_t digits = 0;
    while (digits < text.size() && std::isdigit(static_cast<unsigned char>(text[digits]))) {
      ++digits;
    }
    // Leading zeros are refused: "010" is octal to some tools and decimal to others.
    if (digits == 0 || digits > 3 || (digits > 1 && text[0] == '0')) return std::nullopt;
    unsigned octet = 0;
    std::from_chars(text.data(), text.data() + digits, octet);
    if (octet > 255) return std::nullopt;
    value = (value << 8) | octet;
    text.remove_prefix(digits);
  }
  if (!text.empty()) return std::nullopt;
  return Ipv4Address{value};
}

std::string Ipv4Address::to_string() const {
  return fmt::format("{}.{}.{}.{}", value >> 24, (value >> 16) & 0xFF, (value >> 8) & 0xFF,
                     value & 0xFF);
}

bool Ipv4Address::is_unicast() const {
  uint32_t first = value >> 24;
  return first != 0 && first < 224;
}

std::optional<Ipv4Address> Ipv4Address::plus(uint64_t offset) const {
  uint64_t sum = static_cast<uint64_t>(value) + offset;
  if (sum > UINT32_MAX) return std::nullopt;
  return Ipv4Address{static_cast<uint32_t>(sum)};
}

std::optional<Ipv6Address> Ipv6Address::parse(std::string_view text) {
  // inet_pton implements the full grammar (:: compression, embedded IPv4); it wants a C string.
  std::string copy(text);
  Ipv6Address out;
  if (copy.empty() || inet_pton(AF_INET6, copy.c_str(), out.bytes.data()) != 1) {
    return std::nullopt;
  }
  return out;
}

std::string Ipv6Address::to_string() const {
  // glibc's inet_ntop already follows RFC 5952 (longest zero run compressed, lower case).
  char buffer[INET6_ADDRSTRLEN] = {};
  inet_ntop(AF_INET6, bytes.data(), buffer, sizeof buffer);
  return buffer;
}

bool Ipv6Address::is_unicast() const {
  if (bytes[0] == 0xFF) return false;
  for (uint8_t b : bytes) {
    if (b != 0) return true;
  }
  return false;
}

std::optional<Ipv6Address> Ipv6Address::plus(uint64_t offset) const {
  Ipv6Address out = *this;
  if (!add_big_endian(out.bytes, 16, offset)) return std::nullopt;
  return out;
}

}  // namespace etwire::config

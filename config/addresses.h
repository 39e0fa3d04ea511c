// MAC, IPv4 and IPv6 addresses as plain values: parsed from their usual text forms, printed back
// canonically, compared, and offset by an integer (rank k on a port gets the port's address + k
// when per-rank addressing is on).
#pragma once

#include <array>
#include <compare>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace etwire::config {

struct MacAddress {
  std::array<uint8_t, 6> bytes{};

  // "02:00:0a:00:00:01" or with '-' separators; any case.
  static std::optional<MacAddress> parse(std::string_view text);
  std::string to_string() const;  // lower-case, ':'-separated
  bool is_multicast() const { return (bytes[0] & 0x01) != 0; }
  bool is_zero() const;
  // The address plus `offset` as a 48-bit number; nullopt on overflow.
  std::optional<MacAddress> plus(uint64_t offset) const;
  auto operator<=>(const MacAddress&) const = default;
};

struct Ipv4Address {
  uint32_t value = 0;  // host byte order: 10.0.0.1 is 0x0A000001

  static std::optional<Ipv4Address> parse(std::string_view text);  // dotted quad only
  std::string to_string() const;
  bool is_unicast() const;  // not 0.0.0.0, multicast, broadcast or the 0/8 and 240/4 ranges
  std::optional<Ipv4Address> plus(uint64_t offset) const;
  auto operator<=>(const Ipv4Address&) const = default;
};

struct Ipv6Address {
  std::array<uint8_t, 16> bytes{};

  static std::optional<Ipv6Address> parse(std::string_view text);  // any RFC 4291 text form
  std::string to_string() const;                                   // RFC 5952 canonical form
  bool is_unicast() const;  // not ::, not multicast (ff00::/8)
  std::optional<Ipv6Address> plus(uint64_t offset) const;
  auto operator<=>(const Ipv6Address&) const = default;
};

}  // namespace etwire::config

// Link speeds and pacing rates as lab engineers write them: "100Gbps", "400G", "2.5 Gb/s",
// "5Mbps", "12.5GB/s". Rates are held as whole bits per second.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace etwire {

// A number, then an optional SI prefix (k, M, G, T: powers of 1000, any case), then an optional
// unit: bps, b/s, bit/s (bits) or Bps, B/s (bytes, so x8). A lower-case b means bits and an
// upper-case B bytes, as on data sheets. A bare number is bits per second. Fractions are allowed
// when the result is a whole number of bits per second ("2.5G"). nullopt for anything else or a
// value above 2^64-1.
std::optional<uint64_t> parse_rate_bps(std::string_view text);

// "100 Gb/s", "2.5 Gb/s", "50 Mb/s", "800 b/s": the largest SI prefix that keeps the number at
// least 1, up to three decimals, trailing zeros dropped.
std::string format_rate(uint64_t bits_per_second);

}  // namespace etwire

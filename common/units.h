// Byte sizes and durations as people type and read them: "1MiB", "64K", "4096"; "1.5 MiB".
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace etwire {

// Results show bandwidths in GB/s of 10^9 bytes, as nccl-tests prints them, and times in
// microseconds or milliseconds: the divisors, as doubles, so that no division truncates.
inline constexpr double kBytesPerGB = 1e9;
inline constexpr double kNsPerUs = 1e3;
inline constexpr double kNsPerMs = 1e6;

// Accepts a plain integer or a number with a unit: B, K/KB/KiB, M/MB/MiB, G/GB/GiB, T/TB/TiB
// (case-insensitive). K, M, G, T and the *iB units are powers of 1024; KB, MB, GB, TB are powers
// of 1000, as on the wire. Fractions are allowed when the result is a whole number of bytes
// ("1.5K"). nullopt for anything else, negatives, or values above 2^64-1.
std::optional<uint64_t> parse_bytes(std::string_view text);

// "0 B", "512 B", "1 KiB", "1.50 MiB", "4 GiB": binary units, at most 3 significant decimals.
std::string format_bytes(uint64_t bytes);

// "950", "18.2k", "5.31M", "1.20G": a count or rate with an SI prefix, 3 significant digits.
std::string format_si(double value);

// "850 us", "12.3 ms", "4.20 s" from microseconds.
std::string format_micros(double micros);

}  // namespace etwire

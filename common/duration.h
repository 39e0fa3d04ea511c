// Durations as people write them in configs: "2us", "1.5 ms", "500ns", "3s", "0". Held as whole
// nanoseconds, parsed exactly (no floating point).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace etwire {

// A number and a unit: ns, us (or µs), ms, s. A bare number is accepted only for 0, since "5"
// alone could mean any unit. Fractions are allowed when the result is a whole number of
// nanoseconds ("1.5us"). nullopt for anything else or values above 2^64-1 ns.
std::optional<uint64_t> parse_duration_ns(std::string_view text);

// "0 s", "850 ns", "2 us", "1.5 ms", "67.109 ms", "4 s": the largest unit that keeps the number at
// least 1, up to three decimals, trailing zeros dropped.
std::string format_duration_ns(uint64_t nanoseconds);

}  // namespace etwire

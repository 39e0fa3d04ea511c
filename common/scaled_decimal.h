// Exact decimal arithmetic for unit parsers: "1.5" with a unit worth 10^9 is 1500000000, with no
// floating-point rounding on the way. Rates and durations are parsed through it so that "2.5G" or
// "67.108864ms" mean exactly what they say.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace etwire {

// `digits` is an unsigned decimal ("12", "0.125", ".5"); the result is digits x 10^exponent
// (exponent >= 0).
// nullopt when the text is not such a number, when the result is not a whole number, or when it
// does not fit in 64 bits.
std::optional<uint64_t> scale_decimal(std::string_view digits, int exponent);

// Splits " 2.5 Gbps " into the number ("2.5") and the unit ("Gbps"), trimming blanks around and
// between them. The number is the leading run of digits and dots.
struct NumberAndUnit {
  std::string_view number;
  std::string_view unit;
};
NumberAndUnit split_number_and_unit(std::string_view text);

}  // namespace etwire

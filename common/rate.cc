#include "common/rate.h"

#include <fmt/format.h>

#include <cctype>

#include "common/scaled_decimal.h"

namespace etwire {

namespace {

// Power of ten of an SI prefix letter, or -1.
int si_exponent(char prefix) {
  switch (std::tolower(static_cast<unsigned char>(prefix))) {
    case 'k':
      return 3;
    case 'm':
      return 6;
    case 'g':
      return 9;
    case 't':
      return 12;
    default:
      return -1;
  }
}

// Bits per unit for what follows the prefix: 1 for bits, 8 for bytes, 0 when not a rate unit.
int bits_per_unit(std::string_view unit) {
  if (unit.empty()) return 1;
  for (std::string_view bits : {"bps", "b/s", "bit/s", "bits/s"}) {
    if (unit == bits) return 1;
  }
  for (std::string_view bytes : {"Bps", "B/s"}) {
    if (unit == bytes) return 8;
  }
  return 0;
}

// ".500" -> ".5"
std::string trim_zeros(std::string text) {
  while (!text.empty() && text.back() == '0') text.pop_back();
  if (text == ".") text.clear();
  return text;
}

}  // namespace

std::optional<uint64_t> parse_rate_bps(std::string_view text) {
  auto [number, unit] = split_number_and_unit(text);
  int exponent = 0;
  if (!unit.empty()) {
    int prefix = si_exponent(unit.front());
    // "bps" starts with b, which is no prefix; "Gbps" starts with one.
    if (prefix >= 0) {
      exponent = prefix;
      unit.remove_prefix(1);
    }
  }
  int multiplier = bits_per_unit(unit);
  if (multiplier == 0) return std::nullopt;
  auto value = scale_decimal(number, exponent);
  if (!value) return std::nullopt;
  if (multiplier == 8) {
    if (*value > UINT64_MAX / 8) return std::nullopt;
    return *value * 8;
  }
  return value;
}

std::string format_rate(uint64_t bits_per_second) {
  static constexpr struct {
    uint64_t scale;
    const char* unit;
  } kUnits[] = {{1'000'000'000'000, "Tb/s"},
                {1'000'000'000, "Gb/s"},
                {1'000'000, "Mb/s"},
                {1'000, "kb/s"},
                {1, "b/s"}};
  for (const auto& u : kUnits) {
    if (bits_per_second < u.scale && u.scale != 1) continue;
    uint64_t whole = bits_per_second / u.scale;
    // Thousandths, rounded half up in integer arithmetic so that no value prints as "2.1000".
    uint64_t thousandths = ((bits_per_second % u.scale) * 1000 + u.scale / 2) / u.scale;
    if (u.scale < 1000) thousandths = 0;
    if (thousandths == 1000) {
      ++whole;
      thousandths = 0;
    }
    std::string text = std::to_string(whole);
    if (thousandths != 0) text += trim_zeros(fmt::format(".{:03}", thousandths));
    return text + " " + u.unit;
  }
  return "0 b/s";
}

}  // namespace etwire

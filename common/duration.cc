#include "common/duration.h"

#include <fmt/format.h>

#include "common/scaled_decimal.h"

namespace etwire {

namespace {

// Power of ten of nanoseconds per unit, or -1.
int unit_exponent(std::string_view unit) {
  if (unit == "ns") return 0;
  if (unit == "us" || unit == "\xC2\xB5s" || unit == "\xCE\xBCs") return 3;  // micro sign or mu
  if (unit == "ms") return 6;
  if (unit == "s") return 9;
  return -1;
}

}  // namespace

std::optional<uint64_t> parse_duration_ns(std::string_view text) {
  auto [number, unit] = split_number_and_unit(text);
  if (unit.empty()) {
    auto value = scale_decimal(number, 0);
    if (value && *value == 0) return 0;
    return std::nullopt;
  }
  int exponent = unit_exponent(unit);
  if (exponent < 0) return std::nullopt;
  return scale_decimal(number, exponent);
}

std::string format_duration_ns(uint64_t nanoseconds) {
  static constexpr struct {
    uint64_t scale;
    const char* unit;
  } kUnits[] = {{1'000'000'000, "s"}, {1'000'000, "ms"}, {1'000, "us"}};
  if (nanoseconds == 0) return "0 s";
  for (const auto& u : kUnits) {
    if (nanoseconds < u.scale) continue;
    uint64_t whole = nanoseconds / u.scale;
    uint64_t thousandths = ((nanoseconds % u.scale) * 1000 + u.scale / 2) / u.scale;
    if (thousandths == 1000) {
      ++whole;
      thousandths = 0;
    }
    std::string text = std::to_string(whole);
    if (thousandths != 0) {
      std::string fraction = fmt::format("{:03}", thousandths);
      while (fraction.back() == '0') fraction.pop_back();
      text += "." + fraction;
    }
    return text + " " + u.unit;
  }
  return fmt::format("{} ns", nanoseconds);
}

}  // namespace etwire

#include "common/units.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>

namespace etwire {

std::optional<uint64_t> parse_bytes(std::string_view text) {
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.front()))) {
    text.remove_prefix(1);
  }
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.back()))) {
    text.remove_suffix(1);
  }
  size_t number_end = 0;
  while (number_end < text.size() &&
         (std::isdigit(static_cast<unsigned char>(text[number_end])) || text[number_end] == '.')) {
    ++number_end;
  }
  if (number_end == 0) return std::nullopt;
  std::string number(text.substr(0, number_end));
  std::string unit;
  for (char c : text.substr(number_end)) {
    if (c == ' ') continue;
    unit += static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  }
  long double multiplier = 1;
  if (unit.empty() || unit == "B") {
    multiplier = 1;
  } else {
    static constexpr std::string_view kPrefixes = "KMGT";
    size_t power = kPrefixes.find(unit[0]);
    if (power == std::string_view::npos) return std::nullopt;
    std::string rest = unit.substr(1);
    long double base = 0;
    if (rest.empty() || rest == "IB") {
      base = 1024;
    } else if (rest == "B") {
      base = 1000;
    } else {
      return std::nullopt;
    }
    multiplier = std::pow(base, static_cast<long double>(power + 1));
  }
  if (number.find('.') == std::string::npos) {
    uint64_t value = 0;
    auto [end, ec] = std::from_chars(number.data(), number.data() + number.size(), value);
    if (ec != std::errc() || end != number.data() + number.size()) return std::nullopt;
    long double scaled = static_cast<long double>(value) * multiplier;
    if (scaled > 18446744073709551615.0L) return std::nullopt;
    if (multiplier == 1) return value;
    return static_cast<uint64_t>(scaled);
  }
  if (std::count(number.begin(), number.end(), '.') != 1) return std::nullopt;
  long double value = std::strtold(number.c_str(), nullptr);
  long double scaled = value * multiplier;
  if (scaled > 18446744073709551615.0L) return std::nullopt;
  long double whole = std::round(scaled);
  if (std::fabs(scaled - whole) > 1e-6L) return std::nullopt;
  return static_cast<uint64_t>(whole);
}

std::string format_bytes(uint64_t bytes) {
  static constexpr const char* kUnits[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  if (bytes < 1024) return fmt::format("{} B", bytes);
  double value = static_cast<double>(bytes);
  int unit = 0;
  while (value >= 1024 && unit < 6) {
    value /= 1024;
    ++unit;
  }
  if (value == std::floor(value)) return fmt::format("{:.0f} {}", value, kUnits[unit]);
  return fmt::format("{:.{}f} {}", value, value < 10 ? 2 : (value < 100 ? 1 : 0), kUnits[unit]);
}

std::string format_si(double value) {
  static constexpr const char* kPrefixes[] = {"", "k", "M", "G", "T"};
  int prefix = 0;
  while (std::fabs(value) >= 999.5 && prefix < 4) {
    value /= 1000;
    ++prefix;
  }
  if (prefix == 0) return fmt::format("{:.0f}", value);
  return fmt::format("{:.{}f}{}", value,
                     std::fabs(value) < 9.995 ? 2 : (std::fabs(value) < 99.95 ? 1 : 0),
                     kPrefixes[prefix]);
}

std::string format_micros(double micros) {
  if (micros < 1000) return fmt::format("{:.0f} us", micros);
  if (micros < 1e6) return fmt::format("{:.{}f} ms", micros / 1e3, micros < 1e4 ? 2 : 1);
  return fmt::format("{:.{}f} s", micros / 1e6, micros < 1e7 ? 2 : 1);
}

}  // namespace etwire

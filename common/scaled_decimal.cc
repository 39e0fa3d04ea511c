#include "common/scaled_decimal.h"

#include <cctype>
#include <limits>

namespace etwire {

namespace {

bool is_blank(char c) {
  return std::isspace(static_cast<unsigned char>(c)) != 0;
}

std::string_view trim(std::string_view text) {
  while (!text.empty() && is_blank(text.front())) text.remove_prefix(1);
  while (!text.empty() && is_blank(text.back())) text.remove_suffix(1);
  return text;
}

bool times_ten_plus(uint64_t& value, unsigned digit) {
  constexpr uint64_t kMax = std::numeric_limits<uint64_t>::max();
  if (value > (kMax - digit) / 10) return false;
  value = value * 10 + digit;
  return true;
}

}  // namespace

std::optional<uint64_t> scale_decimal(std::string_view digits, int exponent) {
  if (digits.empty() || exponent < 0) return std::nullopt;
  uint64_t value = 0;
  int fraction_digits = 0;
  bool seen_dot = false;
  bool seen_digit = false;
  for (char c : digits) {
    if (c == '.') {
      if (seen_dot) return std::nullopt;
      seen_dot = true;
      continue;
    }
    if (c < '0' || c > '9') return std::nullopt;
    seen_digit = true;
    unsigned digit = static_cast<unsigned>(c - '0');
    if (seen_dot) {
      // Digits beyond what the exponent can absorb must be zeros, or the value is not whole.
      if (fraction_digits >= exponent) {
        if (digit != 0) return std::nullopt;
        continue;
      }
      ++fraction_digits;
    }
    if (!times_ten_plus(value, digit)) return std::nullopt;
  }
  if (!seen_digit) return std::nullopt;
  for (int i = fraction_digits; i < exponent; ++i) {
    if (!times_ten_plus(value, 0)) return std::nullopt;
  }
  return value;
}

NumberAndUnit split_number_and_unit(std::string_view text) {
  text = trim(text);
  size_t end = 0;
  while (end < text.size() &&
         (std::isdigit(static_cast<unsigned char>(text[end])) || text[end] == '.')) {
    ++end;
  }
  return {text.substr(0, end), trim(text.substr(end))};
}

}  // namespace etwire

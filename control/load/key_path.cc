#include "control/load/key_path.h"

#include <cctype>
#include <charconv>

namespace etwire::control {

namespace {

bool is_key_char(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_' || c == '-';
}

}  // namespace

std::optional<std::vector<PathStep>> parse_key_path(std::string_view text) {
  std::vector<PathStep> steps;
  size_t i = 0;
  bool expect_key = true;  // at the start and after '.'
  while (i < text.size()) {
    if (text[i] == '[') {
      if (steps.empty()) return std::nullopt;
      size_t close = text.find(']', i);
      if (close == std::string_view::npos || close == i + 1) return std::nullopt;
      std::string_view digits = text.substr(i + 1, close - i - 1);
      size_t index = 0;
      auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), index);
      if (ec != std::errc() || end != digits.data() + digits.size()) return std::nullopt;
      steps.push_back({"", index});
      i = close + 1;
      expect_key = false;
      continue;
    }
    if (text[i] == '.') {
      if (expect_key) return std::nullopt;
      expect_key = true;
      ++i;
      continue;
    }
    if (!expect_key) return std::nullopt;  // "a[1]b"
    size_t start = i;
    while (i < text.size() && is_key_char(text[i])) ++i;
    if (i == start) return std::nullopt;
    steps.push_back({std::string(text.substr(start, i - start)), std::nullopt});
    expect_key = false;
  }
  if (steps.empty() || expect_key) return std::nullopt;
  return steps;
}

std::string child_path(std::string_view parent, std::string_view key) {
  if (parent.empty()) return std::string(key);
  std::string path(parent);
  path += '.';
  path += key;
  return path;
}

std::string element_path(std::string_view parent, size_t index) {
  return std::string(parent) + "[" + std::to_string(index) + "]";
}

bool path_within(std::string_view path, std::string_view prefix) {
  if (path.size() < prefix.size() || path.substr(0, prefix.size()) != prefix) return false;
  if (path.size() == prefix.size()) return true;
  char next = path[prefix.size()];
  return next == '.' || next == '[';
}

}  // namespace etwire::control

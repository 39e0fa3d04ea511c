#include "control/load/entry_count.h"

#include <fmt/format.h>

namespace etwire::control {

std::optional<int> line_past_entries(std::string_view text, size_t cap) {
  size_t entries = 0;
  int line = 1;
  for (const char c : text) {
    if (c == '\n') ++line;
    if ((c == '\n' || c == ',') && ++entries > cap) return line;
  }
  return std::nullopt;
}

std::optional<Diagnostic> too_many_entries(std::string_view text, const std::string& file,
                                           std::string_view what, std::string_view hint,
                                           size_t cap) {
  const std::optional<int> line = line_past_entries(text, cap);
  if (!line) return std::nullopt;
  Diagnostic d;
  d.problem = Problem::kSyntax;
  d.where.file = file;
  d.where.line = *line;
  d.where.column = 1;
  d.message = fmt::format("the {} holds more than {} lines and list items, the limit ({})", what,
                          cap, hint);
  return d;
}

}  // namespace etwire::control

#include "control/load/entry_count.h"

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

}  // namespace etwire::control

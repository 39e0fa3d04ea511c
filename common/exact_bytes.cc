#include "common/exact_bytes.h"

#include <fmt/format.h>

namespace etwire {

std::string format_bytes_exact(uint64_t bytes) {
  if (bytes == 0) return "0 B";
  static constexpr struct {
    uint64_t scale;
    const char* unit;
  } kUnits[] = {{1ull << 40, "TiB"}, {1'000'000'000'000ull, "TB"},
                {1ull << 30, "GiB"}, {1'000'000'000ull, "GB"},
                {1ull << 20, "MiB"}, {1'000'000ull, "MB"},
                {1ull << 10, "KiB"}, {1'000ull, "KB"}};
  for (const auto& u : kUnits) {
    if (bytes % u.scale == 0) return fmt::format("{} {}", bytes / u.scale, u.unit);
  }
  return fmt::format("{} B", bytes);
}

}  // namespace etwire

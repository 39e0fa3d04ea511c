// The parsers of the quantities people write in configs and flags: durations, byte sizes, rates.
// They answer nullopt for anything they do not accept and never throw; what they accept goes
// through its formatter too (formatting may round, so no round trip is asserted).
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "common/duration.h"
#include "common/exact_bytes.h"
#include "common/rate.h"
#include "common/units.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace etwire;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  if (auto ns = parse_duration_ns(text)) {
    volatile size_t n = format_duration_ns(*ns).size();
    (void)n;
  }
  if (auto bytes = parse_bytes(text)) {
    volatile size_t n = format_bytes(*bytes).size() + format_bytes_exact(*bytes).size();
    (void)n;
  }
  if (auto bps = parse_rate_bps(text)) {
    volatile size_t n = format_rate(*bps).size();
    (void)n;
  }
  return 0;
}

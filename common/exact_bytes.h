// Byte counts printed so that the number reads back exactly: "150 KB", "1500 KB", "32 MiB",
// "4 KiB", "12345 B". format_bytes() rounds to three decimals, which can make two different
// thresholds look alike in a message that compares them.
#pragma once

#include <cstdint>
#include <string>

namespace etwire {

// The largest binary (KiB, MiB, GiB, TiB) or decimal (KB, MB, GB, TB) unit that divides the
// value exactly, preferring binary on a tie; plain bytes otherwise. parse_bytes() reads every
// result back to the same value.
std::string format_bytes_exact(uint64_t bytes);

}  // namespace etwire

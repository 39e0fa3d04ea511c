// Time in the data plane: signed 64-bit nanoseconds (292 years of range), one type for both the
// virtual clock of the fabric twin and the wall clock of hardware backends.
#pragma once

#include <cstdint>

namespace etwire::clock {

using Nanos = int64_t;

inline constexpr Nanos kNanosPerMicro = 1000;
inline constexpr Nanos kNanosPerMilli = 1000 * kNanosPerMicro;
inline constexpr Nanos kNanosPerSecond = 1000 * kNanosPerMilli;
inline constexpr Nanos kNever = INT64_MAX;

}  // namespace etwire::clock

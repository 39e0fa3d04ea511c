// Counts heap allocations made through operator new in the trace test program: the program's
// global operator new is replaced (allocation_counter.cc) by one that counts, then calls malloc.
#pragma once

#include <cstdint>

namespace etwire::trace::testing {

uint64_t allocation_count();

}  // namespace etwire::trace::testing

// The fabric twin's randomness (ECN marking, fault drops): SplitMix64, a tiny generator whose
// whole state is one 64-bit counter. It is fast, statistically good enough for marking and drop
// decisions, and, unlike the standard library engines and distributions, it gives the same
// numbers on every platform and library version, which a reproducible run needs.
#pragma once

#include <cstdint>

namespace etwire::twin {

// The SplitMix64 output function: a bijective 64-bit mixer. Also used to hash ECMP keys and to
// derive independent streams from one seed.
constexpr uint64_t mix64(uint64_t x) {
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

class SplitMix64 {
 public:
  explicit constexpr SplitMix64(uint64_t seed = 0) : state_(seed) {}

  // An independent generator for one consumer (one link, one queue) of a seeded run: each
  // consumer draws from its own stream, so changing how often one link draws (say, its drop
  // probability) leaves the marks and drops of every other link as they were.
  static constexpr SplitMix64 for_stream(uint64_t seed, uint64_t stream) {
    return SplitMix64(mix64(seed ^ mix64(stream + 0x9E3779B97F4A7C15ull)));
  }

  constexpr uint64_t next() {
    state_ += 0x9E3779B97F4A7C15ull;  // the golden-ratio increment: a full-period Weyl sequence
    return mix64(state_);
  }

  // Uniform in [0, 1), from the top 53 bits (a double's mantissa).
  constexpr double next_unit() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }

  // True with probability p (never for p <= 0, always for p >= 1).
  constexpr bool chance(double p) { return next_unit() < p; }

 private:
  uint64_t state_;
};

}  // namespace etwire::twin

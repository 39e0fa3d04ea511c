// What `etwire sweep` will run, from its command line and the configuration: the series (one per
// collective and algorithm) and each series' sizes, stepped from -b to -e by -f and rounded as
// nccl-tests rounds them (collectives/nccl_sizes.h). Bad input throws SweepInputError with a
// message that names the flag.
#pragma once

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "collectives/algorithm.h"
#include "config/collectives_config.h"

namespace etwire::runner {

class SweepInputError : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

// The sweep's flags as typed.
struct SweepFlags {
  std::string collectives = "all_reduce";
  std::string algorithms;  // empty: each collective's algorithm in the configuration
  std::string min_bytes = "1KiB";
  std::string max_bytes = "64MiB";
  uint64_t step_factor = 2;
};

// The flags read, before the configuration is: what can be checked without it.
struct SweepRequest {
  std::vector<collectives::CollectiveKind> kinds;  // in the order given, each once
  std::vector<collectives::Algorithm> algorithms;  // in the order given, each once; empty: none
  bool tuned = false;  // -a named `auto`: the tuner's pick per size, a series after the others
  uint64_t min_bytes = 0;
  uint64_t max_bytes = 0;
  uint64_t step_factor = 0;
  std::vector<uint64_t> sizes;  // stepped, before rounding
};

SweepRequest read_sweep_flags(const SweepFlags& flags);

struct SweepSeries {
  collectives::CollectiveKind kind;
  collectives::Algorithm algorithm = collectives::Algorithm::kRing;
  bool tuned = false;  // `auto`: the tuner picks per size (algorithm means nothing)
  // Pairs of (requested, rounded) sizes, ascending, each rounded size once.
  std::vector<std::pair<uint64_t, uint64_t>> sizes;
};

struct SweepPlan {
  std::vector<SweepSeries> series;  // collective by collective, then algorithm by algorithm
  std::vector<std::string> notes;   // what was rounded, left out or skipped, and why
  size_t points() const;
};

// `collectives` is the configuration's section: its algorithm for a collective is the series'
// when no -a is given (else the collective's default).
SweepPlan plan_sweep(const SweepRequest& request, uint32_t ranks,
                     const config::CollectivesConfig& collectives);

}  // namespace etwire::runner

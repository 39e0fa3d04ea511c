// Flow completion time percentiles of one collective kind, from the FCT of each of its flows.
//
// Percentiles use the nearest-rank definition: with the N samples in ascending order (numbered
// from 1), the p-th percentile is the sample of rank ceil(p/100 x N). It is always one of the
// measured values (never interpolated), so a p99 of 990 ns means at least 99% of flows finished
// within 990 ns and some flow actually took that long. For the samples 1..1000: p50 = 500,
// p90 = 900, p99 = 990, p99.9 = 999, max = 1000. Ranks are computed in integers, so no rounding
// of p/100 x N moves a percentile by one sample.
#pragma once

#include <cstdint>
#include <vector>

#include "engine/run_results.h"

namespace etwire::engine {

// Nearest rank (1-based) of the percentile `hundredths` / 100 (9990: p99.9) among `count`
// samples; 1 for no samples.
uint64_t nearest_rank(uint64_t count, uint64_t hundredths);

// `samples` is reordered (partially sorted) in place, so large runs need no copy. No samples:
// flows 0 and every percentile 0.
FctPercentiles fct_percentiles(collectives::CollectiveKind kind,
                               std::vector<clock::Nanos>& samples);

}  // namespace etwire::engine

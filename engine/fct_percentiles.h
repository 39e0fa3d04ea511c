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

// The flow completion times of a run, kept as the distinct times and how many flows took each:
// the percentiles above from them are exactly those of every sample, in memory that follows how
// many distinct times there are (never more than their span in nanoseconds), not how many flows.
// An 8192-rank ring all-reduce has 134 M flows, and a few thousand distinct times.
class FctSamples {
 public:
  void add(clock::Nanos fct) {
    pending_.push_back(fct);
    if (pending_.size() >= fold_at_) fold();
  }
  uint64_t count() const { return count_ + pending_.size(); }
  bool empty() const { return count() == 0; }
  // The readers fold what is pending first: the samples stay the same, their storage changes.
  FctPercentiles percentiles(collectives::CollectiveKind kind) const;
  // Every sample, in ascending order: for a split run's partial results.
  std::vector<clock::Nanos> expanded() const;
  // Distinct times held, for the tests.
  size_t distinct() const;

 private:
  struct Value {
    clock::Nanos fct = 0;
    uint64_t flows = 0;
  };
  // Sorts the pending samples into values_. Folding waits for as many pending samples as there
  // are distinct values (and a floor), so each sample costs a logarithmic share of the merges.
  void fold() const;

  static constexpr size_t kMinPending = size_t{1} << 16;
  mutable std::vector<clock::Nanos> pending_;
  mutable std::vector<Value> values_;  // ascending by fct
  mutable uint64_t count_ = 0;         // samples in values_
  mutable size_t fold_at_ = kMinPending;
};

}  // namespace etwire::engine

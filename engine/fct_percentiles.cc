#include "engine/fct_percentiles.h"

#include <algorithm>
#include <cstdint>

namespace etwire::engine {

uint64_t nearest_rank(uint64_t count, uint64_t hundredths) {
  // Percentiles in hundredths of a percent, so p99.9 stays an integer.
  constexpr uint64_t kScale = 10000;
  const uint64_t rank = (count * hundredths + kScale - 1) / kScale;
  return std::max<uint64_t>(rank, 1);
}

FctPercentiles fct_percentiles(collectives::CollectiveKind kind,
                               std::vector<clock::Nanos>& samples) {
  FctPercentiles result;
  result.kind = kind;
  result.flows = samples.size();
  if (samples.empty()) return result;

  // Selection instead of a full sort: a run can hold hundreds of millions of flows. Each
  // percentile is selected within the part above the previous one, so the total work is linear.
  const uint64_t count = samples.size();
  auto low = samples.begin();
  const auto select = [&](uint64_t hundredths) {
    const auto nth =
        samples.begin() + static_cast<std::ptrdiff_t>(nearest_rank(count, hundredths) - 1);
    std::nth_element(low, nth, samples.end());
    low = nth;
    return *nth;
  };
  result.p50 = select(5000);
  result.p90 = select(9000);
  result.p99 = select(9900);
  result.p999 = select(9990);
  result.max = *std::max_element(low, samples.end());
  return result;
}

void FctSamples::fold() const {
  if (pending_.empty()) return;
  std::sort(pending_.begin(), pending_.end());
  // A new array rather than a kept scratch: it would hold as much as values_ between folds.
  std::vector<Value> merged;
  merged.reserve(values_.size() + pending_.size());
  auto add = [&](clock::Nanos fct, uint64_t flows) {
    if (!merged.empty() && merged.back().fct == fct) {
      merged.back().flows += flows;
    } else {
      merged.push_back({fct, flows});
    }
  };
  size_t v = 0;
  for (clock::Nanos fct : pending_) {
    while (v < values_.size() && values_[v].fct < fct) {
      add(values_[v].fct, values_[v].flows);
      ++v;
    }
    add(fct, 1);
  }
  for (; v < values_.size(); ++v) add(values_[v].fct, values_[v].flows);
  count_ += pending_.size();
  pending_.clear();
  values_.swap(merged);
  fold_at_ = std::max(kMinPending, values_.size());
}

size_t FctSamples::distinct() const {
  fold();
  return values_.size();
}

FctPercentiles FctSamples::percentiles(collectives::CollectiveKind kind) const {
  fold();
  FctPercentiles result;
  result.kind = kind;
  result.flows = count_;
  if (count_ == 0) return result;
  // Walk the cumulative counts once: each percentile is the first time whose flows reach its
  // nearest rank.
  const uint64_t hundredths[] = {5000, 9000, 9900, 9990};
  clock::Nanos* out[] = {&result.p50, &result.p90, &result.p99, &result.p999};
  size_t next = 0;
  uint64_t seen = 0;
  for (const Value& value : values_) {
    seen += value.flows;
    while (next < 4 && seen >= nearest_rank(count_, hundredths[next])) *out[next++] = value.fct;
  }
  result.max = values_.back().fct;
  return result;
}

std::vector<clock::Nanos> FctSamples::expanded() const {
  fold();
  std::vector<clock::Nanos> samples;
  samples.reserve(count_);
  for (const Value& value : values_) samples.insert(samples.end(), value.flows, value.fct);
  return samples;
}

}  // namespace etwire::engine

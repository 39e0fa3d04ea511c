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

}  // namespace etwire::engine

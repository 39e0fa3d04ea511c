#include "twin/replay/marking_fit.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <stdexcept>

namespace etwire::twin {

namespace {

constexpr std::array<double, 10> kPmaxLadder{0.01, 0.02, 0.05, 0.1, 0.15, 0.2, 0.3, 0.5, 0.75, 1};

// Probabilities are kept off 0 and 1, so that one mark the curve calls impossible costs the
// candidate a large, finite amount rather than ruling it out.
constexpr double kFloor = 1e-6;

// The samples by the queue they found, in bins of a tenth of a frame: the bins that saw any,
// rising, with how many and how many marked, and the running sums of both.
struct Histogram {
  static constexpr double kBinsPerFrame = 10;
  std::vector<size_t> bin;
  std::vector<double> seen;
  std::vector<double> marked;
  std::vector<double> seen_before;  // over the bins before each, and all at the end
  std::vector<double> marked_before;

  double queue_of(size_t i) const { return (static_cast<double>(bin[i]) + 0.5) / kBinsPerFrame; }
  // The first non-empty bin at or above `frames` (a threshold): bins below hold queues below it.
  size_t first_at(uint32_t frames) const {
    const size_t threshold = static_cast<size_t>(frames * kBinsPerFrame);
    return static_cast<size_t>(std::lower_bound(bin.begin(), bin.end(), threshold) - bin.begin());
  }
};

Histogram histogram(std::span<const QueueSeen> samples, double weight, uint32_t max_frames) {
  const size_t bins = static_cast<size_t>((max_frames + 2) * Histogram::kBinsPerFrame);
  std::vector<uint64_t> seen(bins, 0);
  std::vector<uint64_t> marked(bins, 0);
  double average = 0;
  for (const QueueSeen& s : samples) {
    average = (1 - weight) * average + weight * s.frames_ahead;
    const size_t bin =
        std::min(bins - 1, static_cast<size_t>(std::max(0.0, average) * Histogram::kBinsPerFrame));
    ++seen[bin];
    marked[bin] += s.marked;
  }
  Histogram h;
  h.seen_before.push_back(0);
  h.marked_before.push_back(0);
  for (size_t b = 0; b < bins; ++b) {
    if (seen[b] == 0) continue;
    h.bin.push_back(b);
    h.seen.push_back(static_cast<double>(seen[b]));
    h.marked.push_back(static_cast<double>(marked[b]));
    h.seen_before.push_back(h.seen_before.back() + h.seen.back());
    h.marked_before.push_back(h.marked_before.back() + h.marked.back());
  }
  return h;
}

// Below kmin every bin has the floor's probability and above kmax one less the floor, so those
// parts are sums of counts; only the bins between the thresholds are visited.
double log_likelihood(const Histogram& h, uint32_t kmin, uint32_t kmax, double pmax) {
  static const double kLogFloor = std::log(kFloor);
  static const double kLogCeiling = std::log1p(-kFloor);
  const size_t low = h.first_at(kmin);
  const size_t high = h.first_at(kmax);
  const double low_marked = h.marked_before[low];
  const double low_seen = h.seen_before[low];
  const double high_marked = h.marked_before.back() - h.marked_before[high];
  const double high_seen = h.seen_before.back() - h.seen_before[high];
  double sum = low_marked * kLogFloor + (low_seen - low_marked) * kLogCeiling +
               high_marked * kLogCeiling + (high_seen - high_marked) * kLogFloor;
  for (size_t i = low; i < high; ++i) {
    const double p =
        std::clamp(marking_probability(h.queue_of(i), kmin, kmax, pmax), kFloor, 1 - kFloor);
    sum += h.marked[i] * std::log(p) + (h.seen[i] - h.marked[i]) * std::log1p(-p);
  }
  return sum;
}

double expected(const Histogram& h, uint32_t kmin, uint32_t kmax, double pmax) {
  double sum = 0;
  for (size_t i = 0; i < h.bin.size(); ++i) {
    sum += h.seen[i] * marking_probability(h.queue_of(i), kmin, kmax, pmax);
  }
  return sum;
}

}  // namespace

std::span<const double> pmax_ladder() {
  return kPmaxLadder;
}

double marking_probability(double queue, uint32_t kmin, uint32_t kmax, double pmax) {
  if (queue < kmin) return 0;
  if (queue >= kmax) return 1;
  return pmax * (queue - kmin) / static_cast<double>(kmax - kmin);
}

MarkingFit fit_marking(std::span<const QueueSeen> samples, std::span<const double> weights,
                       uint32_t max_frames) {
  if (samples.empty()) throw std::invalid_argument("fit_marking: no samples");
  MarkingFit best;
  bool found = false;
  for (const double weight : weights) {
    const Histogram h = histogram(samples, weight, max_frames);
    for (uint32_t kmin = 0; kmin <= max_frames; ++kmin) {
      for (uint32_t kmax = kmin + 1; kmax <= max_frames + 1; ++kmax) {
        for (const double pmax : kPmaxLadder) {
          const double ll = log_likelihood(h, kmin, kmax, pmax);
          if (found && ll <= best.log_likelihood) continue;
          found = true;
          best.weight = weight;
          best.kmin = kmin;
          best.kmax = kmax;
          best.pmax = pmax;
          best.log_likelihood = ll;
        }
      }
    }
  }
  const Histogram h = histogram(samples, best.weight, max_frames);
  best.samples = samples.size();
  for (const QueueSeen& s : samples) best.marked += s.marked;
  best.expected_marks = expected(h, best.kmin, best.kmax, best.pmax);
  return best;
}

}  // namespace etwire::twin

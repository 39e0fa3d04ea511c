#include "runner/device_fit.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <stdexcept>

namespace etwire::runner {

namespace {

// Averaging weights the marking fit tries: the queue itself, then averages ever slower.
constexpr std::array<double, 10> kWeights{1, 0.5, 0.2, 0.1, 0.05, 0.02, 0.01, 0.005, 0.002, 0.001};
// Fewer back-to-back arrivals than this and the rate is not read from them.
constexpr uint64_t kLeastBusyPairs = 100;
// The fit's thresholds range over queues up to this many frames.
constexpr uint32_t kMostFrames = 400;
// A measured rate this close to the configured one is the configured one.
constexpr double kRateTolerance = 0.01;

clock::Nanos frame_time(uint32_t bytes, uint64_t rate_bps) {
  return static_cast<clock::Nanos>(
      std::ceil(static_cast<double>(bytes) * 8e9 / static_cast<double>(rate_bps)));
}

double frames_ahead(const Crossing& c, clock::Nanos least, clock::Nanos frame) {
  return std::max(0.0, std::floor(static_cast<double>(c.arrived - c.sent - least) /
                                  static_cast<double>(frame)));
}

// The rate the queue drained at: bytes of frames that arrived behind a queue of two frames or
// more, over the time since the frame before each (a sum that telescopes over a busy stretch, so
// arrivals stamped in bursts still add up).
void measure_rate(const DeviceFitInput& input, DeviceFit& fit) {
  const clock::Nanos frame = frame_time(fit.frame_bytes, input.configured_rate_bps);
  double bytes = 0;
  double time = 0;
  for (const CrossingsTo& run : input.runs) {
    for (size_t i = 1; i < run.crossings.size(); ++i) {
      const Crossing& c = run.crossings[i];
      if (frames_ahead(c, fit.least_delay, frame) < 2) continue;
      bytes += c.wire_bytes;
      time += static_cast<double>(c.arrived - run.crossings[i - 1].arrived);
      ++fit.busy_pairs;
    }
  }
  fit.rate_bps = input.configured_rate_bps;
  if (fit.busy_pairs >= kLeastBusyPairs && time > 0) {
    fit.rate_bps = static_cast<uint64_t>(std::llround(bytes * 8e9 / time));
    fit.rate_measured = true;
  }
}

}  // namespace

DeviceFit fit_device(const DeviceFitInput& input) {
  DeviceFit fit;
  std::vector<uint32_t> sizes;
  std::vector<const Crossing*> by_delay;
  for (const CrossingsTo& run : input.runs) {
    fit.sent += run.data_sent;
    fit.lost += run.data_sent - std::min(run.data_sent, run.data_arrived);
    fit.unmatched += run.unmatched;
    for (const Crossing& c : run.crossings) {
      sizes.push_back(c.wire_bytes);
      by_delay.push_back(&c);
    }
  }
  if (sizes.empty()) throw std::invalid_argument("no data frame crossed the device");
  std::nth_element(sizes.begin(), sizes.begin() + sizes.size() / 2, sizes.end());
  fit.frame_bytes = sizes[sizes.size() / 2];
  // The least delay is the 0.1th percentile, not the least: a resent frame paired with a copy
  // sent after the one that arrived would take a delay no frame had.
  const size_t least = by_delay.size() / 1000;
  std::nth_element(by_delay.begin(), by_delay.begin() + static_cast<ptrdiff_t>(least),
                   by_delay.end(), [](const Crossing* a, const Crossing* b) {
                     return a->arrived - a->sent < b->arrived - b->sent;
                   });
  const Crossing* fastest = by_delay[least];
  fit.least_delay = fastest->arrived - fastest->sent;
  measure_rate(input, fit);
  const clock::Nanos frame = frame_time(fit.frame_bytes, fit.rate_bps);
  if (input.single_switch) {
    // Host cable, store and forward, the switch's latency, the queue's serialization, cable.
    const clock::Nanos sending =
        frame_time(fastest->wire_bytes, input.port_speeds_bps.at(fastest->from));
    const clock::Nanos cables = fit.least_delay - sending - frame - input.switch_latency_ns;
    fit.propagation_ns = std::max<clock::Nanos>(0, cables / 2);
  }
  std::vector<twin::QueueSeen> samples;
  std::vector<double> ahead;
  for (const CrossingsTo& run : input.runs) {
    for (const Crossing& c : run.crossings) {
      samples.push_back({frames_ahead(c, fit.least_delay, frame), c.marked});
      ahead.push_back(samples.back().frames_ahead);
    }
  }
  const size_t p999 = std::min(ahead.size() - 1, ahead.size() * 999 / 1000);
  std::nth_element(ahead.begin(), ahead.begin() + static_cast<ptrdiff_t>(p999), ahead.end());
  fit.most_frames_ahead = static_cast<uint32_t>(ahead[p999]);
  if (std::any_of(samples.begin(), samples.end(), [](const auto& s) { return s.marked; })) {
    fit.marking =
        twin::fit_marking(samples, kWeights, std::min(kMostFrames, fit.most_frames_ahead + 1));
  }
  // A frame that found the queue holding n frames got in: the queue takes one more than the most
  // any frame found, where the device dropped.
  if (fit.lost > 0) fit.queue_packets = fit.most_frames_ahead + 1;
  return fit;
}

std::span<const double> averaging_weights() {
  return kWeights;
}

std::vector<std::string> marking_overrides(const twin::MarkingFit& m, uint32_t frame_bytes) {
  return {"fabric.ecn.enabled=true",
          "fabric.ecn.mark_at=enqueue",
          fmt::format("fabric.ecn.kmin={}", uint64_t{m.kmin} * frame_bytes),
          fmt::format("fabric.ecn.kmax={}", uint64_t{m.kmax} * frame_bytes),
          fmt::format("fabric.ecn.pmax={}", m.pmax),
          fmt::format("fabric.ecn.average_weight={}", m.weight)};
}

ProfileGroups profile_groups(const DeviceFit& fit, size_t port, uint64_t configured_rate_bps) {
  ProfileGroups out;
  const double ratio = static_cast<double>(fit.rate_bps) / static_cast<double>(configured_rate_bps);
  if (fit.rate_measured && std::abs(ratio - 1) > kRateTolerance) {
    out.rate.push_back(fmt::format("ports[{}].speed={}bps", port, fit.rate_bps));
  }
  if (fit.propagation_ns) {
    out.latency.push_back(fmt::format("fabric.propagation_delay={}ns", *fit.propagation_ns));
  }
  if (fit.queue_packets) {
    out.buffer.push_back(fmt::format("fabric.buffer.queue_packets={}", *fit.queue_packets));
  }
  if (fit.marking) out.marking = marking_overrides(*fit.marking, fit.frame_bytes);
  return out;
}

}  // namespace etwire::runner

// The marking curve of a device's queue, fitted to what it did: for each frame that crossed it,
// the queue it found (measured from the frame's queueing delay) and whether it came out CE-marked.
// The curve is the twin's RED (fabric.ecn): no mark below kmin, a probability rising linearly to
// pmax at kmax, every packet above kmax; decided on the queue, or on its average with weight w
// (average_weight: avg = (1 - w) avg + w queue at each arrival). The fit maximizes the likelihood
// of the marks seen, over kmin and kmax in whole frames, a ladder of pmax and the given weights.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

namespace etwire::twin {

struct QueueSeen {
  double frames_ahead = 0;  // the queue the frame found, in frames of the fit's frame size
  bool marked = false;
};

struct MarkingFit {
  double weight = 1;  // average_weight
  uint32_t kmin = 0;  // frames
  uint32_t kmax = 0;  // frames, above kmin
  double pmax = 0;
  double log_likelihood = 0;
  uint64_t samples = 0;
  uint64_t marked = 0;        // marks seen
  double expected_marks = 0;  // marks the fitted curve expects on the same queues
};

// The values of pmax the fit tries, rising.
std::span<const double> pmax_ladder();

// The probability the curve gives a packet that finds `queue` frames (its average, if averaging).
double marking_probability(double queue, uint32_t kmin, uint32_t kmax, double pmax);

// Fits the samples, in arrival order, for each weight of `weights` (1: the instantaneous queue);
// kmin and kmax range over 0 .. `max_frames`. Samples must not be empty.
MarkingFit fit_marking(std::span<const QueueSeen> samples, std::span<const double> weights,
                       uint32_t max_frames);

}  // namespace etwire::twin

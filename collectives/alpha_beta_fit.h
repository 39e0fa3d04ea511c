// The alpha-beta (latency-bandwidth) model of a collective's time, fitted to measured points:
// time = alpha + bytes / beta. alpha is what a collective costs however small (per-step
// latencies, the handshake of every transfer); beta the bandwidth its bytes then move at.
//
// The fit is a least-squares fit of the relative error, (alpha + bytes / beta - time) / time,
// not of the absolute one: a sweep's sizes span several orders of magnitude, and an unweighted
// fit would let the largest sizes decide alpha too (a millisecond's residual swamps a few
// microseconds of latency), often making it negative.
#pragma once

#include <cstddef>
#include <optional>
#include <span>

namespace etwire::collectives {

struct AlphaBetaFit {
  double alpha_us = 0;  // the intercept; may come out negative when the points are not linear
  // Bytes per microsecond (MB/s); nullopt when the time does not grow with the size.
  std::optional<double> beta_bytes_per_us;
  size_t points = 0;              // the points fitted (those with a positive time)
  double rms_relative_error = 0;  // of the fitted times against the measured ones
  double max_relative_error = 0;

  // beta in GB/s (1e9 bytes per second); nullopt as beta_bytes_per_us.
  std::optional<double> beta_gb_per_second() const;
};

// Fits the points (bytes[i], time_us[i]); the spans are of equal length. Points with a time that
// is not positive are left out. nullopt when fewer than two distinct sizes remain.
std::optional<AlphaBetaFit> fit_alpha_beta(std::span<const double> bytes,
                                           std::span<const double> time_us);

}  // namespace etwire::collectives

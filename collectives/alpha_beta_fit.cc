#include "collectives/alpha_beta_fit.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace etwire::collectives {

std::optional<double> AlphaBetaFit::beta_gb_per_second() const {
  if (!beta_bytes_per_us) return std::nullopt;
  return *beta_bytes_per_us * 1e6 / 1e9;
}

std::optional<AlphaBetaFit> fit_alpha_beta(std::span<const double> bytes,
                                           std::span<const double> time_us) {
  if (bytes.size() != time_us.size()) {
    throw std::invalid_argument("fit_alpha_beta: as many sizes as times are needed");
  }
  // Weighted least squares of time = a + b * bytes with weights 1 / time^2: the normal equations
  // of the relative residuals.
  double s = 0, sx = 0, sy = 0, sxx = 0, sxy = 0;
  size_t points = 0;
  double first_x = 0;
  bool distinct = false;
  for (size_t i = 0; i < bytes.size(); ++i) {
    const double x = bytes[i];
    const double y = time_us[i];
    if (!(y > 0) || !std::isfinite(y) || !std::isfinite(x)) continue;
    if (points == 0) {
      first_x = x;
    } else if (x != first_x) {
      distinct = true;
    }
    ++points;
    const double w = 1 / (y * y);
    s += w;
    sx += w * x;
    sy += w * y;
    sxx += w * x * x;
    sxy += w * x * y;
  }
  if (!distinct) return std::nullopt;
  const double det = s * sxx - sx * sx;
  if (!(det > 0)) return std::nullopt;
  const double slope = (s * sxy - sx * sy) / det;
  AlphaBetaFit fit;
  fit.alpha_us = (sxx * sy - sx * sxy) / det;
  if (slope > 0) fit.beta_bytes_per_us = 1 / slope;
  fit.points = points;
  double squares = 0;
  for (size_t i = 0; i < bytes.size(); ++i) {
    const double y = time_us[i];
    if (!(y > 0) || !std::isfinite(y) || !std::isfinite(bytes[i])) continue;
    const double relative = std::abs(fit.alpha_us + slope * bytes[i] - y) / y;
    squares += relative * relative;
    fit.max_relative_error = std::max(fit.max_relative_error, relative);
  }
  fit.rms_relative_error = std::sqrt(squares / static_cast<double>(points));
  return fit;
}

}  // namespace etwire::collectives

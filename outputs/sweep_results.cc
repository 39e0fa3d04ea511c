#include "outputs/sweep_results.h"

#include <fmt/format.h>

#include <ctime>

#include "collectives/bandwidth.h"
#include "outputs/results_files.h"

namespace etwire::outputs {

bool in_series(const SweepPoint& point, const SweepFit& series) {
  return point.kind == series.kind && point.tuned == series.tuned &&
         (series.tuned || point.algorithm == series.algorithm);
}

SweepFit series_of(const SweepPoint& point) {
  SweepFit series;
  series.kind = point.kind;
  series.algorithm = point.algorithm;
  series.tuned = point.tuned;
  return series;
}

std::string series_algorithm(const SweepFit& series) {
  return series.tuned ? "auto" : std::string(collectives::algorithm_name(series.algorithm));
}

std::string series_name(const SweepFit& series) {
  return fmt::format("{}-{}", collective_type_label(series.kind), series_algorithm(series));
}

std::string point_algorithm(const SweepPoint& point) {
  if (!point.tuned) return std::string(collectives::algorithm_name(point.algorithm));
  return point.picked ? std::string(collectives::algorithm_name(*point.picked)) : "auto";
}

std::vector<SweepFit> fit_sweep(const SweepResults& sweep) {
  std::vector<SweepFit> fits;
  for (const SweepPoint& point : sweep.points) {
    bool known = false;
    for (const SweepFit& fit : fits) known = known || in_series(point, fit);
    if (known) continue;
    SweepFit fit = series_of(point);
    fit.busbw_factor = collectives::busbw_factor(point.kind, sweep.ranks);
    double busbw_sum = 0;
    size_t measured = 0;
    for (const SweepPoint& p : sweep.points) {
      if (!in_series(p, fit) || !p.measured) continue;
      busbw_sum += p.measured->busbw_gbps;
      ++measured;
    }
    if (measured > 0) fit.average_busbw_gbps = busbw_sum / static_cast<double>(measured);
    if (fit.busbw_factor > 0) {
      std::vector<double> bus_bytes, times;
      for (const SweepPoint& p : sweep.points) {
        if (!in_series(p, fit) || !p.measured) continue;
        bus_bytes.push_back(static_cast<double>(p.bytes) * fit.busbw_factor);
        times.push_back(p.measured->cct_us);
      }
      fit.fit = collectives::fit_alpha_beta(bus_bytes, times);
    }
    fits.push_back(fit);
  }
  return fits;
}

std::string sweep_time_now() {
  const std::time_t now = std::time(nullptr);
  std::tm local{};
  localtime_r(&now, &local);
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%d %H:%M:%S", &local);
  return text;
}

}  // namespace etwire::outputs

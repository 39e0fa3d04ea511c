#include "outputs/sweep_results.h"

#include <ctime>

#include "collectives/bandwidth.h"

namespace etwire::outputs {

std::vector<SweepFit> fit_sweep(const SweepResults& sweep) {
  std::vector<SweepFit> fits;
  for (const SweepPoint& point : sweep.points) {
    bool known = false;
    for (const SweepFit& fit : fits) {
      known = known || (fit.kind == point.kind && fit.algorithm == point.algorithm);
    }
    if (known) continue;
    SweepFit fit{point.kind, point.algorithm, collectives::busbw_factor(point.kind, sweep.ranks),
                 std::nullopt, 0};
    double busbw_sum = 0;
    size_t measured = 0;
    for (const SweepPoint& p : sweep.points) {
      if (p.kind != point.kind || p.algorithm != point.algorithm || !p.measured) continue;
      busbw_sum += p.measured->busbw_gbps;
      ++measured;
    }
    if (measured > 0) fit.average_busbw_gbps = busbw_sum / static_cast<double>(measured);
    if (fit.busbw_factor > 0) {
      std::vector<double> bus_bytes, times;
      for (const SweepPoint& p : sweep.points) {
        if (p.kind != point.kind || p.algorithm != point.algorithm || !p.measured) continue;
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

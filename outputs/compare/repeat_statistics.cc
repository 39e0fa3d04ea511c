#include "outputs/compare/repeat_statistics.h"

#include <cmath>

namespace etwire::outputs {

SampleStats sample_stats(std::span<const double> values) {
  SampleStats s;
  s.n = static_cast<uint32_t>(values.size());
  if (values.empty()) return s;
  double sum = 0;
  for (double v : values) sum += v;
  s.mean = sum / static_cast<double>(s.n);
  if (s.n < 2) return s;
  double squares = 0;
  for (double v : values) squares += (v - s.mean) * (v - s.mean);
  s.sd = std::sqrt(squares / static_cast<double>(s.n - 1));
  return s;
}

namespace {

// The regularized incomplete beta function I_x(a, b), by its continued fraction (evaluated with
// Lentz's method), on the side of x where the fraction converges fast.
double incomplete_beta(double a, double b, double x) {
  if (x <= 0) return 0;
  if (x >= 1) return 1;
  if (x > (a + 1) / (a + b + 2)) return 1 - incomplete_beta(b, a, 1 - x);
  const double front = std::exp(std::lgamma(a + b) - std::lgamma(a) - std::lgamma(b) +
                                a * std::log(x) + b * std::log1p(-x)) /
                       a;
  constexpr double kTiny = 1e-300;
  double f = 1, c = 1, d = 0;
  for (int i = 0; i <= 400; ++i) {
    const int m = i / 2;
    double numerator = 1;  // the first term
    if (i > 0) {
      numerator = i % 2 == 0 ? m * (b - m) * x / ((a + 2 * m - 1) * (a + 2 * m))
                             : -(a + m) * (a + b + m) * x / ((a + 2 * m) * (a + 2 * m + 1));
    }
    d = 1 + numerator * d;
    d = std::fabs(d) < kTiny ? 1 / kTiny : 1 / d;
    c = 1 + numerator / c;
    if (std::fabs(c) < kTiny) c = kTiny;
    f *= c * d;
    if (std::fabs(c * d - 1) < 1e-14) break;
  }
  return front * (f - 1);
}

}  // namespace

double student_t95(double df) {
  if (!(df >= 1)) df = 1;
  // P(|T| > t) = I_{df / (df + t^2)}(df / 2, 1 / 2); the t where it is 5 %, by bisection.
  double low = 0, high = 1000;
  for (int i = 0; i < 100; ++i) {
    const double t = (low + high) / 2;
    (incomplete_beta(df / 2, 0.5, df / (df + t * t)) > 0.05 ? low : high) = t;
  }
  return (low + high) / 2;
}

std::optional<std::pair<double, double>> difference_interval95(const SampleStats& a,
                                                               const SampleStats& b) {
  if (a.n == 0 || b.n == 0) return std::nullopt;
  // A side of one run has no spread of its own: it adds nothing to the error, and no degree of
  // freedom.
  const double va = a.n > 1 ? a.sd * a.sd / a.n : 0.0;
  const double vb = b.n > 1 ? b.sd * b.sd / b.n : 0.0;
  const double variance = va + vb;
  if (variance <= 0) return std::nullopt;
  double denominator = 0;
  if (a.n > 1) denominator += va * va / (a.n - 1);
  if (b.n > 1) denominator += vb * vb / (b.n - 1);
  const double df = variance * variance / denominator;  // Welch-Satterthwaite
  const double half = student_t95(df) * std::sqrt(variance);
  const double difference = b.mean - a.mean;
  return std::pair{difference - half, difference + half};
}

}  // namespace etwire::outputs

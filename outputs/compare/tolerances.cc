#include "outputs/compare/tolerances.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <stdexcept>

#include "dataplane/port_counters.h"

namespace etwire::outputs {

namespace {

constexpr std::string_view kCongestionGroup = "congestion";

double parse_percent(std::string_view text, std::string_view argument) {
  // A trailing % is what people write after a percentage.
  if (text.ends_with('%')) text.remove_suffix(1);
  double value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || error != std::errc() || end != text.data() + text.size() ||
      !std::isfinite(value) || value < 0) {
    throw std::invalid_argument(fmt::format(
        "--tolerance {}: expected a percentage >= 0 such as 5, or METRIC=PCT such as busbw=5",
        argument));
  }
  return value;
}

}  // namespace

const std::vector<std::string>& tolerance_metric_names() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> list{"cct",     "cct_p50", "busbw",   "ideal",
                                  "fct_p50", "fct_p99", "fct_max", "jct"};
    list.emplace_back(kCongestionGroup);
    for (const dataplane::PortCounterField& field : dataplane::kPortCounterFields) {
      if (!field.congestion_column.empty()) list.emplace_back(field.name);
    }
    return list;
  }();
  return names;
}

void Tolerances::add(std::string_view argument) {
  const size_t equals = argument.find('=');
  if (equals == std::string_view::npos) {
    all_ = parse_percent(argument, argument);
    return;
  }
  const std::string metric(argument.substr(0, equals));
  const auto& names = tolerance_metric_names();
  if (std::find(names.begin(), names.end(), metric) == names.end()) {
    std::string known;
    for (const std::string& name : names) {
      if (!known.empty()) known += ", ";
      known += name;
    }
    throw std::invalid_argument(
        fmt::format("--tolerance {}: unknown metric \"{}\"; metrics: {}", argument, metric, known));
  }
  per_metric_[metric] = parse_percent(argument.substr(equals + 1), argument);
}

std::optional<double> Tolerances::of(const std::string& metric, bool congestion_counter) const {
  if (auto it = per_metric_.find(metric); it != per_metric_.end()) return it->second;
  if (congestion_counter) {
    if (auto it = per_metric_.find(std::string(kCongestionGroup)); it != per_metric_.end()) {
      return it->second;
    }
  }
  return all_;
}

}  // namespace etwire::outputs

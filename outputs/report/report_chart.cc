#include "outputs/report/report_chart.h"

#include <cmath>
#include <set>
#include <string_view>

namespace etwire::outputs::report {

namespace {

const char* style_name(ReportChart::Style style) {
  switch (style) {
    case ReportChart::Style::kLine:
      return "line";
    case ReportChart::Style::kSteps:
      return "steps";
    case ReportChart::Style::kMarkers:
      return "markers";
  }
  return "line";
}

// JSON has no NaN or infinity: such a point is left out rather than breaking the page.
bool finite(double x, double y) {
  return std::isfinite(x) && std::isfinite(y);
}

}  // namespace

size_t ReportChart::points() const {
  size_t total = 0;
  for (const ChartSeries& s : series) total += s.x.size();
  return total;
}

size_t ReportChart::panels() const {
  std::set<std::string_view> names;
  for (const ChartSeries& s : series) {
    if (!s.panel.empty()) names.insert(s.panel);
  }
  return names.size();
}

nlohmann::json ReportChart::to_json() const {
  nlohmann::json j;
  j["id"] = id;
  j["title"] = title;
  j["x_label"] = x_label;
  j["y_label"] = y_label;
  j["style"] = style_name(style);
  j["log_x"] = log_x;
  j["small_multiples"] = small_multiples;
  nlohmann::json all = nlohmann::json::array();
  for (const ChartSeries& s : series) {
    nlohmann::json points = nlohmann::json::array();
    for (size_t i = 0; i < s.x.size() && i < s.y.size(); ++i) {
      if (finite(s.x[i], s.y[i])) points.push_back({s.x[i], s.y[i]});
    }
    all.push_back(
        {{"label", s.label}, {"run", s.run}, {"panel", s.panel}, {"points", std::move(points)}});
  }
  j["series"] = std::move(all);
  j["notes"] = notes;
  return j;
}

std::vector<size_t> spread_indexes(size_t count, size_t limit) {
  std::vector<size_t> picked;
  if (count == 0 || limit == 0) return picked;
  if (count <= limit || limit == 1) {
    const size_t n = count <= limit ? count : 1;
    for (size_t i = 0; i < n; ++i) picked.push_back(count <= limit ? i : count - 1);
    return picked;
  }
  picked.reserve(limit);
  for (size_t i = 0; i < limit; ++i) {
    picked.push_back(static_cast<size_t>(std::llround(
        static_cast<double>(i) * static_cast<double>(count - 1) / static_cast<double>(limit - 1))));
  }
  return picked;
}

}  // namespace etwire::outputs::report

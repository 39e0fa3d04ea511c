// One chart of the HTML report, as data: its axes and its series, each series a list of (x, y)
// points. Every run of the report adds its series to the same charts, so two runs overlay.
// A chart that ends up with no series shows its notes instead (a file the run did not write).
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace etwire::outputs::report {

struct ChartSeries {
  std::string label;
  size_t run = 0;  // which run of the report it comes from (drawn dashed after the first)
  // The small chart it is drawn in when its chart is small multiples (a port's name); every
  // run's series of one panel share it.
  std::string panel = {};
  std::vector<double> x;
  std::vector<double> y;
};

struct ReportChart {
  enum class Style {
    kLine,     // connected points, no markers (time series)
    kSteps,    // each y holds from the x before to its own (rates over sample intervals)
    kMarkers,  // connected points with markers (per iteration)
  };
  std::string id;  // the HTML element's id: "busbw", "fct_cdf", ...
  std::string title;
  std::string x_label;
  std::string y_label;
  Style style = Style::kLine;
  bool log_x = false;
  std::vector<ChartSeries> series;
  std::vector<std::string> notes;  // why something is missing or left out
  // One small chart per panel, their axes shared, instead of every series on one: the ports'
  // throughput once there are too many lines to tell apart.
  bool small_multiples = false;

  size_t points() const;
  // The distinct panels its series name.
  size_t panels() const;
  // {"id", "title", "x_label", "y_label", "style", "log_x", "small_multiples", "series":
  // [{"label", "points": [[x, y], ...], "run", "panel"}], "notes"}: what the page's script draws.
  nlohmann::json to_json() const;
};

// At most `limit` of the indexes 0 .. count-1, evenly spread, the first and last included:
// series stay bounded on large runs (the page stays small and quick).
std::vector<size_t> spread_indexes(size_t count, size_t limit);

}  // namespace etwire::outputs::report

// The chart of queues.csv: the fabric twin's switch egress queue depth over time.
#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <limits>
#include <map>

#include "outputs/report/csv_reader.h"
#include "outputs/report/report_charts.h"

namespace etwire::outputs::report {

namespace {

constexpr double kBytesPerKB = 1e3;

struct QueueRows {
  std::vector<int64_t> at;
  std::vector<uint64_t> depth;  // bytes, every priority of the port
  uint64_t peak = 0;
};

}  // namespace

void add_queue_depths(const ReportRun& run, const std::string& prefix, const TimeAxis& axis,
                      ReportChart& chart) {
  const std::filesystem::path path = run.file("queues.csv");
  if (!run.has("queues.csv")) {
    chart.notes.push_back(
        fmt::format("{}{} is not there: queue depths are sampled on the fabric twin with "
                    "telemetry.record.queue_sample_interval",
                    prefix, path.string()));
    return;
  }
  CsvReader csv(path.string());
  const size_t time = csv.column("time_ns");
  const size_t port = csv.column("switch_port");
  const size_t depth = csv.column("depth_bytes");
  std::map<std::string, QueueRows, std::less<>> queues;
  int64_t last_at = std::numeric_limits<int64_t>::min();
  // queues.csv leaves out empty queues on idle links: the sampling interval is the smallest step
  // between sample times, and a queue missing from a sample was empty then.
  int64_t interval = std::numeric_limits<int64_t>::max();
  while (csv.next()) {
    const int64_t at = csv.integer(time);
    if (at < last_at) csv.fail("time_ns goes back");
    if (at > last_at && last_at != std::numeric_limits<int64_t>::min()) {
      interval = std::min(interval, at - last_at);
    }
    last_at = at;
    auto found = queues.find(csv.text(port));
    if (found == queues.end())
      found = queues.emplace(std::string(csv.text(port)), QueueRows{}).first;
    QueueRows& rows = found->second;
    const auto bytes = static_cast<uint64_t>(csv.integer(depth));
    if (!rows.at.empty() && rows.at.back() == at) {
      rows.depth.back() += bytes;  // another priority of the same port
    } else {
      rows.at.push_back(at);
      rows.depth.push_back(bytes);
    }
    rows.peak = std::max(rows.peak, rows.depth.back());
  }
  if (queues.empty()) {
    chart.notes.push_back(fmt::format("{}{}: no queue held a packet", prefix, path.string()));
    return;
  }
  std::vector<std::string> shown;
  for (const auto& [name, rows] : queues) shown.push_back(name);
  std::stable_sort(shown.begin(), shown.end(), [&](const std::string& a, const std::string& b) {
    return queues.find(a)->second.peak > queues.find(b)->second.peak;
  });
  if (shown.size() > kMaxQueueSeries) {
    chart.notes.push_back(fmt::format("{}the {} deepest of {} switch ports' queues", prefix,
                                      kMaxQueueSeries, shown.size()));
    shown.resize(kMaxQueueSeries);
  }
  for (const std::string& name : shown) {
    const QueueRows& rows = queues.find(name)->second;
    // The samples with the empty ones put back where the file left them out.
    std::vector<std::pair<int64_t, uint64_t>> points;
    for (size_t i = 0; i < rows.at.size(); ++i) {
      const int64_t before = i == 0 ? rows.at[i] - interval : rows.at[i - 1];
      if (interval != std::numeric_limits<int64_t>::max() && rows.at[i] - before > interval) {
        if (i > 0) points.emplace_back(before + interval, 0);
        points.emplace_back(rows.at[i] - interval, 0);
      }
      points.emplace_back(rows.at[i], rows.depth[i]);
    }
    ChartSeries series;
    series.label = prefix + name;
    // Too many points: each kept one is the deepest of its stretch, so no peak is lost.
    const size_t stretch = (points.size() + kMaxTimePoints - 1) / kMaxTimePoints;
    for (size_t begin = 0; begin < points.size(); begin += stretch) {
      const auto end =
          points.begin() + static_cast<std::ptrdiff_t>(std::min(points.size(), begin + stretch));
      const auto deepest =
          std::max_element(points.begin() + static_cast<std::ptrdiff_t>(begin), end,
                           [](const auto& a, const auto& b) { return a.second < b.second; });
      series.x.push_back(static_cast<double>(deepest->first) / axis.ns_per_unit);
      series.y.push_back(static_cast<double>(deepest->second) / kBytesPerKB);
    }
    chart.series.push_back(std::move(series));
  }
}

}  // namespace etwire::outputs::report

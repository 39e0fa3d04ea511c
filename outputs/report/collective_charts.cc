// The charts of collectives and flows: busbw per iteration and the FCT CDF.
#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <unordered_map>

#include "common/units.h"
#include "outputs/report/csv_reader.h"
#include "outputs/report/report_charts.h"
#include "outputs/results_files.h"
#include "transport/flow_record.h"

namespace etwire::outputs::report {

void add_busbw_per_iteration(const ReportRun& run, const std::string& prefix, ReportChart& chart) {
  const engine::RunResults& results = run.results;
  struct Sum {
    double busbw = 0;
    uint64_t count = 0;
  };
  // (job, type label) -> iteration -> sum of its instances' busbw.
  std::map<std::pair<uint32_t, std::string>, std::map<uint32_t, Sum>> sums;
  for (const engine::CollectiveRecord& c : results.collectives) {
    if (c.warmup) continue;
    Sum& sum = sums[{c.job, collective_type_label(c.kind)}][c.iteration];
    sum.busbw += c.busbw_bytes_per_second();
    ++sum.count;
  }
  if (sums.empty()) {
    chart.notes.push_back(fmt::format("{}no measured collective instances in {}", prefix,
                                      run.file("summary.json").string()));
    return;
  }
  for (const auto& [key, iterations] : sums) {
    ChartSeries series;
    series.label = prefix + (results.jobs.size() > 1
                                 ? fmt::format("{} {}", job_label(results, key.first), key.second)
                                 : key.second);
    std::vector<std::pair<uint32_t, Sum>> points(iterations.begin(), iterations.end());
    for (size_t i : spread_indexes(points.size(), kMaxIterationPoints)) {
      const auto& [iteration, sum] = points[i];
      series.x.push_back(iteration);
      series.y.push_back(sum.busbw / static_cast<double>(sum.count) / kBytesPerGB);
    }
    chart.series.push_back(std::move(series));
  }
}

void add_fct_cdf(const ReportRun& run, const std::string& prefix, ReportChart& chart) {
  const std::filesystem::path path = run.file("flows.csv");
  if (!run.has("flows.csv")) {
    chart.notes.push_back(fmt::format(
        "{}{} is not there (telemetry.record.flows was off): no FCT CDF", prefix, path.string()));
    return;
  }
  // The measured instances' types, by instance number.
  std::unordered_map<uint64_t, std::string> type_of;
  for (const engine::CollectiveRecord& c : run.results.collectives) {
    if (!c.warmup) type_of.emplace(c.instance, collective_type_label(c.kind));
  }
  std::map<std::string, std::vector<int64_t>> fcts;
  CsvReader csv(path.string());
  const size_t instance = csv.column("collective");
  const size_t fct = csv.column("fct_ns");
  const size_t status = csv.column("status");
  const std::string_view completed = transport::flow_status_name(transport::FlowStatus::kCompleted);
  while (csv.next()) {
    if (csv.text(status) != completed || csv.text(fct).empty()) continue;
    const auto type = type_of.find(static_cast<uint64_t>(csv.integer(instance)));
    if (type == type_of.end()) continue;  // a warm-up instance's flow, or an unfinished instance's
    fcts[type->second].push_back(csv.integer(fct));
  }
  if (fcts.empty()) {
    chart.notes.push_back(fmt::format("{}{}: no completed flow of a measured collective instance",
                                      prefix, path.string()));
    return;
  }
  for (auto& [type, samples] : fcts) {
    std::sort(samples.begin(), samples.end());
    ChartSeries series;
    series.label = prefix + type;
    const double n = static_cast<double>(samples.size());
    for (size_t i : spread_indexes(samples.size(), kMaxCdfPoints)) {
      series.x.push_back(static_cast<double>(samples[i]) / kNsPerUs);
      series.y.push_back(static_cast<double>(i + 1) / n);
    }
    chart.series.push_back(std::move(series));
  }
}

}  // namespace etwire::outputs::report

#include "outputs/report/sweep_page.h"

#include <fmt/format.h>

#include <map>
#include <vector>

#include "common/units.h"
#include "outputs/report/csv_reader.h"
#include "outputs/report/html_page.h"
#include "outputs/report/html_tables.h"
#include "outputs/result_tables.h"

namespace etwire::outputs::report {

namespace {

// A figure of sweep.csv as the console's tables print it; "-" where the size measured nothing.
std::string figure(const CsvReader& csv, size_t column, int decimals) {
  if (csv.text(column).empty()) return "-";
  return fmt::format("{:.{}f}", csv.real(column), decimals);
}

}  // namespace

bool is_sweep_dir(const std::filesystem::path& dir) {
  std::error_code error;
  return std::filesystem::exists(dir / "sweep.csv", error) &&
         !std::filesystem::exists(dir / "summary.json", error);
}

std::string sweep_html(const std::filesystem::path& dir) {
  CsvReader csv((dir / "sweep.csv").string());
  const size_t collective = csv.column("collective");
  const size_t algorithm = csv.column("algorithm");
  const size_t size = csv.column("size");
  const size_t time = csv.column("time_us");
  const size_t algbw = csv.column("algbw_GBps");
  const size_t busbw = csv.column("busbw_GBps");
  const size_t ideal = csv.column("ideal_percent");
  const size_t instances = csv.column("instances");
  const size_t status = csv.column("status");
  ReportChart busbw_chart{"sweep_busbw",
                          "busbw against size",
                          "size (bytes)",
                          "busbw (GB/s)",
                          ReportChart::Style::kMarkers,
                          true,
                          {},
                          {}};
  ReportChart time_chart{"sweep_time",
                         "Collective completion time against size",
                         "size (bytes)",
                         "time (us)",
                         ReportChart::Style::kMarkers,
                         true,
                         {},
                         {}};
  TableCells table{{"collective", "algorithm", "size", "time_us", "algbw_GBps", "busbw_GBps",
                    "ideal_%", "instances", "status"},
                   {}};
  std::map<std::string, size_t> series_of;  // "all_reduce ring" -> its index in both charts
  while (csv.next()) {
    const std::string name = fmt::format("{} {}", csv.text(collective), csv.text(algorithm));
    const int64_t bytes = csv.integer(size);
    table.rows.push_back({std::string(csv.text(collective)), std::string(csv.text(algorithm)),
                          format_bytes(static_cast<uint64_t>(bytes)), figure(csv, time, 1),
                          figure(csv, algbw, 2), figure(csv, busbw, 2), figure(csv, ideal, 1),
                          std::string(csv.text(instances)), std::string(csv.text(status))});
    if (csv.text(busbw).empty()) continue;  // measured nothing: no point
    auto [at, added] = series_of.emplace(name, busbw_chart.series.size());
    if (added) {
      busbw_chart.series.push_back({name, 0, "", {}, {}});
      time_chart.series.push_back({name, 0, "", {}, {}});
    }
    busbw_chart.series[at->second].x.push_back(static_cast<double>(bytes));
    busbw_chart.series[at->second].y.push_back(csv.real(busbw));
    time_chart.series[at->second].x.push_back(static_cast<double>(bytes));
    time_chart.series[at->second].y.push_back(csv.real(time));
  }
  if (busbw_chart.series.empty()) {
    busbw_chart.notes.push_back("no size of the sweep measured anything (see the table)");
    time_chart.notes.push_back(busbw_chart.notes.back());
  }

  std::string out = html_page_start(fmt::format("etwire sweep: {}", dir.string()));
  out +=
      fmt::format("<p class=\"meta\">{} &middot; {} sizes in {} series</p>\n",
                  html_escape((dir / "sweep.csv").string()), table.rows.size(), series_of.size());
  append_chart(busbw_chart,
               "Mean busbw of each size's measured instances (GB/s of 1e9 bytes; nccl-tests' "
               "busbw: algbw times the collective's bus factor), log size axis.",
               out);
  append_chart(time_chart, "Mean CCT of each size's measured instances, log size axis.", out);
  out += "<h2>Every size</h2>\n";
  append_html_table(table, out);
  append_html_page_end({busbw_chart, time_chart},
                       nlohmann::json::array({{{"label", "sweep"}, {"dir", dir.string()}}}), out);
  return out;
}

}  // namespace etwire::outputs::report

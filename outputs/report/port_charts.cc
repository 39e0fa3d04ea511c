// The charts of ports.csv: each port's transmit rate, and the congestion counters over time.
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <filesystem>
#include <map>

#include "outputs/report/csv_reader.h"
#include "outputs/report/report_charts.h"

namespace etwire::outputs::report {

namespace {

// The congestion counters the chart shows, summed over the ports: ports.csv column, series name.
constexpr std::array<std::pair<std::string_view, std::string_view>, 7> kCongestionCounters{{
    {"ecn_marked_received", "ECN-CE marked packets received"},
    {"cnps_sent", "CNPs sent"},
    // Received as well as sent: a host port of the twin sends none, but receives its switch's.
    {"pfc_pauses_sent", "PFC pause frames sent"},
    {"pfc_pauses_received", "PFC pause frames received"},
    {"retransmitted_packets", "packets retransmitted"},
    {"timeouts", "retransmission timeouts"},
    {"drops", "packets dropped"},
}};

struct PortRows {
  std::vector<int64_t> at;
  std::vector<uint64_t> tx_bytes;
};

// The rows of one sample time, all ports' congestion counters added up.
struct CongestionSample {
  int64_t at = 0;
  std::array<uint64_t, kCongestionCounters.size()> totals{};
};

}  // namespace

TimeAxis time_axis_for(clock::Nanos longest_run) {
  if (longest_run >= 10'000'000'000) return {"s", 1e9};
  if (longest_run >= 10'000'000) return {"ms", 1e6};
  return {"us", 1e3};
}

void add_port_series(const ReportRun& run, const std::string& prefix, const TimeAxis& axis,
                     ReportChart& throughput, ReportChart& congestion) {
  const std::filesystem::path path = run.file("ports.csv");
  if (!run.has("ports.csv")) {
    const std::string note = fmt::format(
        "{}{} is not there (telemetry.record.port_sample_interval was 0, or the run is older)",
        prefix, path.string());
    throughput.notes.push_back(note);
    congestion.notes.push_back(note);
    return;
  }
  CsvReader csv(path.string());
  const size_t time = csv.column("time_ns");
  const size_t port = csv.column("port");
  const size_t tx = csv.column("tx_bytes");
  std::array<size_t, kCongestionCounters.size()> counter_columns{};
  for (size_t c = 0; c < kCongestionCounters.size(); ++c) {
    counter_columns[c] = csv.column(kCongestionCounters[c].first);
  }
  std::map<std::string, PortRows, std::less<>> ports;
  std::vector<std::string> order;  // ports in their order in the file
  std::vector<CongestionSample> samples;
  while (csv.next()) {
    const int64_t at = csv.integer(time);
    if (!samples.empty() && at < samples.back().at) csv.fail("time_ns goes back");
    auto found = ports.find(csv.text(port));
    if (found == ports.end()) {
      order.emplace_back(csv.text(port));
      found = ports.emplace(order.back(), PortRows{}).first;
    }
    found->second.at.push_back(at);
    found->second.tx_bytes.push_back(static_cast<uint64_t>(csv.integer(tx)));
    if (samples.empty() || samples.back().at != at) samples.push_back({at, {}});
    for (size_t c = 0; c < counter_columns.size(); ++c) {
      // Empty: the port's device does not count it, which adds nothing.
      samples.back().totals[c] += static_cast<uint64_t>(csv.integer(counter_columns[c]));
    }
  }
  if (samples.empty()) {
    throughput.notes.push_back(fmt::format("{}{} has no samples", prefix, path.string()));
    congestion.notes.push_back(throughput.notes.back());
    return;
  }

  // The ports that sent the most, when there are too many to tell apart.
  std::vector<std::string> shown = order;
  if (shown.size() > kMaxPortSeries) {
    std::stable_sort(shown.begin(), shown.end(), [&](const std::string& a, const std::string& b) {
      return ports.at(a).tx_bytes.back() > ports.at(b).tx_bytes.back();
    });
    throughput.notes.push_back(fmt::format("{}the {} ports that sent the most of {}", prefix,
                                           kMaxPortSeries, shown.size()));
    shown.resize(kMaxPortSeries);
  }
  for (const std::string& name : shown) {
    const PortRows& rows = ports.at(name);
    ChartSeries series;
    series.label = prefix + name;
    series.panel = name;
    // Counters are running totals: the rate between two kept samples is exact over their span,
    // however many samples between were left out.
    const std::vector<size_t> kept = spread_indexes(rows.at.size(), kMaxTimePoints + 1);
    series.x.push_back(static_cast<double>(rows.at[kept.front()]) / axis.ns_per_unit);
    series.y.push_back(0);
    for (size_t k = 1; k < kept.size(); ++k) {
      const size_t from = kept[k - 1];
      const size_t to = kept[k];
      const int64_t span = rows.at[to] - rows.at[from];
      // A counter that went back (a device reset) gives no rate for that span.
      if (span <= 0 || rows.tx_bytes[to] < rows.tx_bytes[from]) continue;
      const double bits = 8.0 * static_cast<double>(rows.tx_bytes[to] - rows.tx_bytes[from]);
      series.x.push_back(static_cast<double>(rows.at[to]) / axis.ns_per_unit);
      series.y.push_back(bits / static_cast<double>(span));  // bits per ns = Gb/s
    }
    throughput.series.push_back(std::move(series));
  }

  const std::vector<size_t> kept = spread_indexes(samples.size(), kMaxTimePoints);
  for (size_t c = 0; c < kCongestionCounters.size(); ++c) {
    ChartSeries series;
    series.label = prefix + std::string(kCongestionCounters[c].second);
    for (size_t k : kept) {
      series.x.push_back(static_cast<double>(samples[k].at) / axis.ns_per_unit);
      series.y.push_back(static_cast<double>(samples[k].totals[c]));
    }
    congestion.series.push_back(std::move(series));
  }
}

}  // namespace etwire::outputs::report

#include "outputs/result_tables.h"

#include <fmt/format.h>

#include <map>
#include <tuple>

#include "collectives/bandwidth.h"
#include "common/text_table.h"
#include "common/units.h"
#include "outputs/results_files.h"

namespace etwire::outputs {

namespace {

// Point-to-point sorts after every collective type.
int kind_order(collectives::CollectiveKind kind) {
  return kind ? static_cast<int>(*kind) : trace::kCollectiveTypeCount;
}

std::string micros_text(clock::Nanos nanos) {
  return fmt::format("{:.2f}", static_cast<double>(nanos) / kNsPerUs);
}

std::string millis_text(clock::Nanos nanos) {
  return fmt::format("{:.3f}", static_cast<double>(nanos) / kNsPerMs);
}

bool saw_congestion(const engine::PortRecord& p) {
  for (size_t f = 0; f < dataplane::kPortCounterFields.size(); ++f) {
    const auto& field = dataplane::kPortCounterFields[f];
    if (!field.congestion_column.empty() && p.counted(f) && p.*field.member != 0) return true;
  }
  return false;
}

// Instances of one (job, collective, size, group size), summed for their means.
struct CollectiveGroup {
  collectives::CollectiveKind kind;
  uint64_t algbw_bytes = 0;
  uint64_t count = 0;
  double cct_ns = 0;
  double algbw = 0;
  double busbw = 0;
};

}  // namespace

std::string render_text(const TableCells& cells) {
  TextTable table(cells.header);
  for (const auto& row : cells.rows) table.add_row(row);
  return table.render();
}

std::vector<CollectiveMeans> measured_collective_means(const engine::RunResults& results) {
  using Key = std::tuple<uint32_t, int, uint64_t, uint32_t>;  // job, kind, trace bytes, group size
  std::map<Key, CollectiveGroup> groups;
  for (const engine::CollectiveRecord& c : results.collectives) {
    if (c.warmup) continue;
    CollectiveGroup& g = groups[Key{c.job, kind_order(c.kind), c.trace_bytes, c.group_size}];
    g.kind = c.kind;
    g.algbw_bytes = c.algbw_bytes;
    ++g.count;
    g.cct_ns += static_cast<double>(c.cct());
    g.algbw += c.algbw_bytes_per_second();
    g.busbw += c.busbw_bytes_per_second();
  }
  std::vector<CollectiveMeans> means;
  for (const auto& [key, g] : groups) {
    const auto& [job, order, trace_bytes, group_size] = key;
    const double n = static_cast<double>(g.count);
    const double busbw = g.busbw / n;
    means.push_back({job, g.kind, trace_bytes, g.algbw_bytes, group_size, g.count,
                     g.cct_ns / n / kNsPerUs, g.algbw / n / kBytesPerGB, busbw / kBytesPerGB,
                     collectives::ideal_percent(busbw, results.goodput_bytes_per_second)});
  }
  return means;
}

std::string time_us_cell(double micros) {
  return fmt::format("{:.1f}", micros);
}
std::string bandwidth_cell(double gbps) {
  return fmt::format("{:.2f}", gbps);
}
std::string percent_cell(double percent) {
  return fmt::format("{:.1f}", percent);
}

TableCells collective_table(const engine::RunResults& results) {
  TableCells table{{"job", "collective", "size", "count", "group", "time_us", "algbw_GBps",
                    "busbw_GBps", "ideal_%"},
                   {}};
  for (const CollectiveMeans& m : measured_collective_means(results)) {
    table.rows.push_back({job_label(results, m.job), collective_type_label(m.kind),
                          format_bytes(m.trace_bytes), std::to_string(m.instances),
                          std::to_string(m.group_size), time_us_cell(m.cct_us),
                          bandwidth_cell(m.algbw_gbps), bandwidth_cell(m.busbw_gbps),
                          percent_cell(m.ideal_percent)});
  }
  return table;
}

TableCells fct_table(const engine::RunResults& results) {
  TableCells table{{"collective", "flows", "p50", "p90", "p99", "p99.9", "max"}, {}};
  for (const engine::FctPercentiles& f : results.fct) {
    table.rows.push_back({collective_type_label(f.kind), std::to_string(f.flows),
                          micros_text(f.p50), micros_text(f.p90), micros_text(f.p99),
                          micros_text(f.p999), micros_text(f.max)});
  }
  return table;
}

TableCells iteration_table(const engine::RunResults& results) {
  TableCells table{{"job", "iteration", "jct_ms", "max_exposed_comm_ms"}, {}};
  for (const engine::IterationRecord& it : results.iterations) {
    if (it.warmup) continue;
    table.rows.push_back({job_label(results, it.job), std::to_string(it.iteration),
                          millis_text(it.jct()), millis_text(it.max_exposed_comm())});
  }
  return table;
}

TableCells congestion_table(const engine::RunResults& results) {
  TableCells table{{"port"}, {}};
  for (const auto& field : dataplane::kPortCounterFields) {
    if (!field.congestion_column.empty()) table.header.emplace_back(field.congestion_column);
  }
  for (const engine::PortRecord& p : results.ports) {
    if (!saw_congestion(p)) continue;
    std::vector<std::string> row{p.name};
    for (size_t f = 0; f < dataplane::kPortCounterFields.size(); ++f) {
      const auto& field = dataplane::kPortCounterFields[f];
      if (field.congestion_column.empty()) continue;
      row.push_back(p.counted(f) ? std::to_string(p.*field.member) : "-");
    }
    table.rows.push_back(std::move(row));
  }
  return table;
}

}  // namespace etwire::outputs

#include "outputs/report/qps_csv_reader.h"

#include <fmt/format.h>

#include <array>
#include <string>

#include "outputs/qp_results.h"
#include "outputs/report/csv_reader.h"

namespace etwire::outputs::report {

namespace {

// The index of the port or job named `name`, by the names summary.json gave them.
template <typename List, typename Name>
uint32_t index_of(const CsvReader& csv, const List& list, Name name_of, std::string_view name,
                  std::string_view what) {
  for (size_t i = 0; i < list.size(); ++i) {
    if (name_of(list[i]) == name) return static_cast<uint32_t>(i);
  }
  csv.fail(fmt::format("{} \"{}\" is not in summary.json's {}s", what, name, what));
}

// A run port, or an aggregation host after them, as qps.csv names it (qp_results.h).
uint32_t port_index(const CsvReader& csv, const engine::RunResults& results,
                    std::string_view name) {
  if (const std::optional<uint32_t> index = qp_port_index(results, name)) return *index;
  csv.fail(fmt::format("port \"{}\" is not in summary.json's ports", name));
}

uint64_t whole(const CsvReader& csv, size_t column, std::string_view name) {
  const int64_t value = csv.integer(column);
  if (value < 0) csv.fail(fmt::format("{} is negative", name));
  return static_cast<uint64_t>(value);
}

}  // namespace

void read_qps_csv(const std::filesystem::path& path, engine::RunResults& results) {
  CsvReader csv(path.string());
  const size_t role = csv.column("role");
  const size_t port = csv.column("port");
  const size_t remote_port = csv.column("remote_port");
  const size_t qpn = csv.column("qpn");
  const size_t remote_qpn = csv.column("remote_qpn");
  const size_t job = csv.column("job");
  const size_t rank = csv.column("rank");
  const size_t peer = csv.column("peer");
  const size_t qp_index = csv.column("qp_index");
  std::array<size_t, transport::kQpCounterFields.size()> counters{};
  // A qps.csv written before a counter existed has no column for it: read as 0.
  constexpr size_t kNoColumn = SIZE_MAX;
  for (size_t f = 0; f < counters.size(); ++f) {
    const std::string_view name = transport::kQpCounterFields[f].name;
    counters[f] = csv.has_column(name) ? csv.column(name) : kNoColumn;
  }
  const size_t rate_cuts = csv.column("rate_cuts");
  const size_t min_rate = csv.column("min_rate_bps");
  const size_t mean_rate = csv.column("mean_rate_bps");
  const size_t busy = csv.column("busy_ns");
  const auto job_name = [](const engine::JobSummary& j) -> const std::string& { return j.name; };
  results.qps.clear();
  while (csv.next()) {
    engine::QpRecord qp;
    transport::QpStats& s = qp.stats;
    if (csv.text(role) == transport::qp_role_name(transport::QpRole::kRequester)) {
      s.role = transport::QpRole::kRequester;
    } else if (csv.text(role) == transport::qp_role_name(transport::QpRole::kResponder)) {
      s.role = transport::QpRole::kResponder;
    } else {
      csv.fail(fmt::format("role \"{}\" is neither requester nor responder", csv.text(role)));
    }
    s.port = port_index(csv, results, csv.text(port));
    s.remote_port = port_index(csv, results, csv.text(remote_port));
    s.qpn = static_cast<uint32_t>(whole(csv, qpn, "qpn"));
    s.remote_qpn = static_cast<uint32_t>(whole(csv, remote_qpn, "remote_qpn"));
    // An empty job: a half the engine did not open (qps.csv leaves job and ranks out).
    qp.known = !csv.text(job).empty();
    if (qp.known) {
      qp.job = index_of(csv, results.jobs, job_name, csv.text(job), "job");
      qp.rank = static_cast<int32_t>(csv.integer(rank));
      qp.peer = static_cast<int32_t>(csv.integer(peer));
      qp.qp_index = static_cast<uint32_t>(whole(csv, qp_index, "qp_index"));
    }
    for (size_t f = 0; f < counters.size(); ++f) {
      if (counters[f] == kNoColumn) continue;
      s.counters.*transport::kQpCounterFields[f].member =
          whole(csv, counters[f], transport::kQpCounterFields[f].name);
    }
    s.rate_cuts = whole(csv, rate_cuts, "rate_cuts");
    s.min_rate_bps = csv.real(min_rate);
    s.mean_rate_bps = csv.real(mean_rate);
    s.busy_ns = static_cast<clock::Nanos>(whole(csv, busy, "busy_ns"));
    results.qps.push_back(qp);
  }
  results.qps_counted = true;
}

}  // namespace etwire::outputs::report

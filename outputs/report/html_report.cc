#include "outputs/report/html_report.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <iterator>
#include <nlohmann/json.hpp>

#include "common/duration.h"
#include "outputs/output_file.h"
#include "outputs/qp_results.h"
#include "outputs/report/comparison_html.h"
#include "outputs/report/html_page.h"
#include "outputs/report/html_tables.h"
#include "outputs/report/report_charts.h"
#include "outputs/result_tables.h"
#include "outputs/results_files.h"

namespace etwire::outputs::report {

namespace {

// The series label prefix of run `r`: none when the report has one run.
std::string prefix_of(const std::vector<ReportRun>& runs, size_t r) {
  return runs.size() > 1 ? runs[r].label + ": " : std::string();
}

std::vector<ReportChart> build_charts(const std::vector<ReportRun>& runs) {
  clock::Nanos longest = 0;
  for (const ReportRun& run : runs) longest = std::max(longest, run.results.end_time);
  const TimeAxis axis = time_axis_for(longest);
  const std::string time_label = fmt::format("time ({})", axis.unit);

  ReportChart busbw{"busbw",
                    "busbw per iteration",
                    "iteration",
                    "busbw (GB/s)",
                    ReportChart::Style::kMarkers,
                    false,
                    {},
                    {}};
  ReportChart fct{"fct_cdf",
                  "Flow completion time CDF per collective type",
                  "FCT (us)",
                  "fraction of flows",
                  ReportChart::Style::kLine,
                  false,
                  {},
                  {}};
  ReportChart throughput{"port_throughput",
                         "Port throughput (transmitted)",
                         time_label,
                         "Gb/s",
                         ReportChart::Style::kSteps,
                         false,
                         {},
                         {}};
  ReportChart queues{"queue_depth",
                     "Switch egress queue depth (fabric twin)",
                     time_label,
                     "depth (KB)",
                     ReportChart::Style::kLine,
                     false,
                     {},
                     {}};
  ReportChart congestion{"congestion",
                         "Congestion counters, all ports (running totals)",
                         time_label,
                         "count",
                         ReportChart::Style::kLine,
                         false,
                         {},
                         {}};
  for (size_t r = 0; r < runs.size(); ++r) {
    const std::string prefix = prefix_of(runs, r);
    std::array<size_t, 5> before{busbw.series.size(), fct.series.size(), throughput.series.size(),
                                 queues.series.size(), congestion.series.size()};
    add_busbw_per_iteration(runs[r], prefix, busbw);
    add_fct_cdf(runs[r], prefix, fct);
    add_port_series(runs[r], prefix, axis, throughput, congestion);
    add_queue_depths(runs[r], prefix, axis, queues);
    size_t c = 0;
    for (ReportChart* chart : {&busbw, &fct, &throughput, &queues, &congestion}) {
      for (size_t s = before[c]; s < chart->series.size(); ++s) chart->series[s].run = r;
      ++c;
    }
  }
  // Past a handful of ports their lines hide each other: a small chart each.
  throughput.small_multiples = throughput.panels() > kMaxOverlaidPorts;
  return {std::move(busbw), std::move(fct), std::move(throughput), std::move(queues),
          std::move(congestion)};
}

void append_run_header(const ReportRun& run, bool several, std::string& out) {
  const engine::RunResults& r = run.results;
  if (several) out += fmt::format("<h3>{}</h3>\n", html_escape(run.label));
  out += fmt::format(
      "<p class=\"meta\">{} &middot; status {} &middot; {} rank{} in {} job{} &middot; topology {} "
      "&middot; seed {} &middot; {} time {}</p>\n",
      html_escape(run.dir.string()), html_escape(engine::run_status_name(r.status)), r.world_size,
      r.world_size == 1 ? "" : "s", r.jobs.size(), r.jobs.size() == 1 ? "" : "s",
      html_escape(r.topology), r.seed, r.wall_clock ? "run" : "virtual",
      html_escape(r.end_time < 0 ? fmt::format("{} ns", r.end_time)
                                 : format_duration_ns(static_cast<uint64_t>(r.end_time))));
  out += fmt::format("<p class=\"meta\">{} flows, {} failed &middot; config {} ({})</p>\n", r.flows,
                     r.failed_flows, html_escape(r.config_file), html_escape(r.config_digest));
  // What the run noted as it went: each fault and what it did, a capture cut short, ...
  for (const std::string& note : r.notes) {
    out += fmt::format("<p class=\"run-note\">Note: {}</p>\n", html_escape(note));
  }
}

// A table of each run under one heading; `empty` where a run has no row.
void append_tables(const std::vector<ReportRun>& runs, std::string_view heading,
                   TableCells (*make)(const engine::RunResults&), std::string_view empty,
                   std::string& out, std::string_view caption = {}) {
  out += fmt::format("<h2>{}</h2>\n", html_escape(heading));
  if (!caption.empty()) out += fmt::format("<p class=\"caption\">{}</p>\n", html_escape(caption));
  for (const ReportRun& run : runs) {
    if (runs.size() > 1) out += fmt::format("<h3>{}</h3>\n", html_escape(run.label));
    const TableCells table = make(run.results);
    if (table.rows.empty()) {
      out += fmt::format("<p class=\"note\">{}</p>\n", html_escape(empty));
    } else {
      append_html_table(table, out);
    }
  }
}

void append_qp_tables(const std::vector<ReportRun>& runs, std::string& out) {
  out += "<h2>QPs that met the most congestion</h2>\n";
  for (const ReportRun& run : runs) {
    if (runs.size() > 1) out += fmt::format("<h3>{}</h3>\n", html_escape(run.label));
    if (!run.results.qps_counted) {
      out +=
          "<p class=\"note\">qps.csv is not there: an RNIC runs its own transport (verbs ports), "
          "or the run is older.</p>\n";
      continue;
    }
    const QpCongestion qps = qp_congestion(run.results);
    if (qps.met == 0) {
      out += fmt::format(
          "<p class=\"note\">No requester retransmitted or had its rate cut ({} QP halves in "
          "qps.csv).</p>\n",
          run.results.qps.size());
      continue;
    }
    append_html_table(qps.table, out);
    out += fmt::format(
        "<p class=\"caption\">{} of {} requesters retransmitted or had their rate cut by DCQCN; "
        "the {} with most retransmissions and cuts, from qps.csv.</p>\n",
        qps.met, qps.requesters, qps.table.rows.size());
  }
}

}  // namespace

std::string html_report(const std::vector<ReportRun>& runs, const RunComparison* comparison) {
  const std::vector<ReportChart> charts = build_charts(runs);
  const bool several = runs.size() > 1;
  std::string title = "etwire report: ";
  for (size_t r = 0; r < runs.size(); ++r) {
    if (r > 0) title += " vs ";
    title += runs[r].results.run_name.empty() ? runs[r].label : runs[r].results.run_name;
  }

  std::string out = html_page_start(title);
  for (const ReportRun& run : runs) append_run_header(run, several, out);
  if (comparison != nullptr) append_comparison_html(*comparison, out);

  append_tables(runs, "Collectives, measured iterations", collective_table,
                "No measured collective instances (none completed outside warm-up iterations).",
                out,
                "As nccl-tests prints them: time is the mean CCT from the last member's arrival "
                "(us); algbw and busbw in GB/s of 1e9 bytes per second; ideal % against the "
                "slowest port's RoCE goodput.");
  append_tables(runs, "Flow completion times, measured iterations (us, nearest rank)", fct_table,
                "No measured flows.", out);
  append_tables(runs, "Iterations, measured (jct: first rank's start to last rank's end; ms)",
                iteration_table, "No measured iterations completed.", out);
  append_tables(runs,
                "Congestion signals, ports that saw any (ECN marks received; PFC pause frames)",
                congestion_table,
                "No congestion signals: no ECN marks, CNPs, PFC pauses, drops, missing packets, "
                "retransmissions or timeouts on any port.",
                out);
  append_qp_tables(runs, out);

  const std::array<std::string_view, 5> captions{
      "Mean busbw of each measured iteration's instances of a collective type (nccl-tests "
      "convention; warm-up iterations left out).",
      "Completed flows of measured collective instances, from flows.csv.",
      "Transmitted wire bytes per sample interval, from ports.csv (each step is the mean rate over "
      "its interval).",
      "Bytes waiting in each switch port's egress queues (all priorities), from queues.csv.",
      "ECN-CE marked packets received, CNPs sent, PFC pause frames sent and received (XOFF), "
      "retransmissions, retransmission timeouts and drops of every port added up, from "
      "ports.csv."};
  for (size_t c = 0; c < charts.size(); ++c) append_chart(charts[c], captions[c], out);

  nlohmann::json labels = nlohmann::json::array();
  for (const ReportRun& run : runs) {
    labels.push_back({{"label", run.label}, {"dir", run.dir.string()}});
  }
  append_html_page_end(charts, std::move(labels), out);
  return out;
}

void write_html_report(const std::vector<ReportRun>& runs, const std::string& path,
                       const RunComparison* comparison) {
  write_file_atomically(path, html_report(runs, comparison));
}

}  // namespace etwire::outputs::report

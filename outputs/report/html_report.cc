#include "outputs/report/html_report.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <iterator>
#include <nlohmann/json.hpp>

#include "common/duration.h"
#include "outputs/output_file.h"
#include "outputs/qp_results.h"
#include "outputs/report/chart_library.h"
#include "outputs/report/comparison_html.h"
#include "outputs/report/html_tables.h"
#include "outputs/report/report_charts.h"
#include "outputs/result_tables.h"
#include "outputs/results_files.h"

namespace etwire::outputs::report {

namespace {

constexpr std::string_view kStyle = R"css(
body { font-family: system-ui, -apple-system, "Segoe UI", sans-serif; margin: 24px auto;
       padding: 0 24px; max-width: 1200px; color: #1d1d1f; background: #fff; }
h1 { font-size: 22px; margin-bottom: 4px; }
h2 { font-size: 17px; margin-top: 28px; border-bottom: 1px solid #ddd; padding-bottom: 4px; }
h3 { font-size: 14px; margin: 14px 0 6px; }
.meta { color: #555; font-size: 13px; margin: 2px 0; }
table { border-collapse: collapse; font-size: 13px; font-variant-numeric: tabular-nums; }
th, td { padding: 3px 10px; border-bottom: 1px solid #eee; text-align: right; }
th:first-child, td:first-child { text-align: left; }
th { background: #f5f5f7; }
.chart { position: relative; height: 340px; margin: 8px 0 4px; }
.chart[data-note="true"] { height: auto; }
.note { color: #8a5a00; background: #fff8e6; border-left: 3px solid #f0b400; padding: 6px 10px;
        font-size: 13px; margin: 6px 0; }
.caption { color: #555; font-size: 12px; margin: 2px 0 14px; }
.verdict { font-size: 15px; font-weight: 600; padding: 8px 12px; margin: 8px 0; }
.verdict.pass { color: #1b5e20; background: #e8f5e9; border-left: 4px solid #2e7d32; }
.verdict.fail { color: #b71c1c; background: #fdecea; border-left: 4px solid #c62828; }
tr.marked td { background: #fdecea; color: #b71c1c; }
.chart.multiples { height: auto; display: grid; gap: 4px 12px;
                  grid-template-columns: repeat(auto-fill, minmax(270px, 1fr)); }
.panel { position: relative; height: 150px; }
.run-note { font-size: 13px; margin: 2px 0; padding-left: 10px; border-left: 3px solid #1f77b4; }
)css";

// Draws every chart of the report's data with Chart.js, then marks each chart's box with the
// points drawn, for whoever checks the page (tests/outputs/report_chromium_test.py).
constexpr std::string_view kScript = R"js(
(function () {
  const data = JSON.parse(document.getElementById('etwire-report-data').textContent);
  const palette = ['#1f77b4', '#ff7f0e', '#2ca02c', '#d62728', '#9467bd', '#8c564b', '#e377c2',
                   '#7f7f7f', '#bcbd22', '#17becf', '#393b79', '#637939', '#8c6d31', '#843c39',
                   '#7b4173', '#3182bd'];
  const dashes = [[], [6, 4], [2, 3], [10, 3, 2, 3]];
  // Marks the chart's box with the points drawn: of its one chart, or of all its small ones.
  const countDrawn = {
    id: 'etwireCountDrawn',
    afterRender(chart) {
      let drawn = 0;
      chart.data.datasets.forEach((dataset, i) => {
        if (chart.isDatasetVisible(i)) drawn += chart.getDatasetMeta(i).data.length;
      });
      chart.canvas.dataset.points = String(drawn);
      const box = chart.canvas.closest('.chart');
      let total = 0;
      box.querySelectorAll('canvas').forEach((c) => { total += Number(c.dataset.points || 0); });
      box.dataset.points = String(total);
      box.dataset.rendered = 'true';
    }
  };
  for (const spec of data.charts) {
    const box = document.getElementById('chart-' + spec.id);
    if (!box) continue;
    if (spec.series.length === 0) {
      box.dataset.points = '0';
      box.dataset.note = 'true';
      continue;
    }
    const dataset = (series, color) => ({
      label: series.label,
      data: series.points.map((p) => ({x: p[0], y: p[1]})),
      borderColor: color,
      backgroundColor: color,
      borderDash: dashes[series.run % dashes.length],
      borderWidth: 1.5,
      pointRadius: spec.style === 'markers' ? 3 : 0,
      stepped: spec.style === 'steps' ? 'before' : false,
      tension: 0,
      showLine: true
    });
    const draw = (parent, datasets, extra) => {
      const canvas = document.createElement('canvas');
      parent.appendChild(canvas);
      new Chart(canvas, {
        type: 'line',
        data: {datasets: datasets},
        options: {
          animation: false,
          responsive: true,
          maintainAspectRatio: false,
          parsing: false,
          interaction: {mode: 'nearest', intersect: false},
          scales: {
            x: Object.assign({type: spec.log_x ? 'logarithmic' : 'linear',
                              title: {display: true, text: spec.x_label}}, extra.x),
            y: Object.assign({beginAtZero: true, title: {display: true, text: spec.y_label}},
                             extra.y)
          },
          plugins: Object.assign({legend: {position: 'bottom', labels: {boxWidth: 14}}},
                                 extra.plugins)
        },
        plugins: [countDrawn]
      });
    };
    if (!spec.small_multiples) {
      draw(box, spec.series.map((series, i) => dataset(series, palette[i % palette.length])), {});
      continue;
    }
    // A small chart per panel, in the order the panels first come; one colour per run, the same
    // axes in every panel so that they compare at a glance.
    box.classList.add('multiples');
    const panels = new Map();
    let xMin = Infinity, xMax = -Infinity, yMax = 0;
    for (const series of spec.series) {
      if (!panels.has(series.panel)) panels.set(series.panel, []);
      panels.get(series.panel).push(series);
      for (const p of series.points) {
        xMin = Math.min(xMin, p[0]);
        xMax = Math.max(xMax, p[0]);
        yMax = Math.max(yMax, p[1]);
      }
    }
    for (const [name, members] of panels) {
      const panel = document.createElement('div');
      panel.className = 'panel';
      box.appendChild(panel);
      draw(panel, members.map((series) => dataset(series, palette[series.run % palette.length])), {
        x: {suggestedMin: xMin, suggestedMax: xMax, title: {display: false}},
        y: {suggestedMax: yMax},
        plugins: {legend: {display: false}, title: {display: true, text: name}}
      });
    }
  }
})();
)js";

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
                   std::string& out) {
  out += fmt::format("<h2>{}</h2>\n", html_escape(heading));
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

void append_chart(const ReportChart& chart, std::string_view caption, std::string& out) {
  out += fmt::format("<h2>{}</h2>\n", html_escape(chart.title));
  for (const std::string& note : chart.notes) {
    out += fmt::format("<p class=\"note\">{}</p>\n", html_escape(note));
  }
  out += fmt::format("<div class=\"chart\" id=\"chart-{}\" data-chart=\"{}\"></div>\n",
                     html_escape(chart.id), html_escape(chart.id));
  if (!chart.series.empty() && !caption.empty()) {
    out += fmt::format("<p class=\"caption\">{}</p>\n", html_escape(caption));
  }
}

// JSON inside a <script> element: "</script>" or "<!--" in a label must not end it early.
std::string script_safe_json(const nlohmann::json& json) {
  const std::string text = json.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    if (c == '<') {
      out += "\\u003c";
    } else {
      out += c;
    }
  }
  return out;
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

  std::string out;
  out += "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n";
  out += fmt::format("<title>{}</title>\n<style>{}</style>\n</head>\n<body>\n", html_escape(title),
                     kStyle);
  out += fmt::format("<h1>{}</h1>\n", html_escape(title));
  for (const ReportRun& run : runs) append_run_header(run, several, out);
  if (comparison != nullptr) append_comparison_html(*comparison, out);

  out += "<h2>Collectives, measured iterations</h2>\n";
  out +=
      "<p class=\"caption\">As nccl-tests prints them: time is the mean CCT from the last "
      "member's arrival (us); algbw and busbw in GB/s of 1e9 bytes per second; ideal % against "
      "the slowest port's RoCE goodput.</p>\n";
  for (const ReportRun& run : runs) {
    if (several) out += fmt::format("<h3>{}</h3>\n", html_escape(run.label));
    const TableCells table = collective_table(run.results);
    if (table.rows.empty()) {
      out +=
          "<p class=\"note\">No measured collective instances (none completed outside warm-up "
          "iterations).</p>\n";
    } else {
      append_html_table(table, out);
    }
  }
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

  nlohmann::json data;
  data["runs"] = nlohmann::json::array();
  for (const ReportRun& run : runs) {
    data["runs"].push_back({{"label", run.label}, {"dir", run.dir.string()}});
  }
  data["charts"] = nlohmann::json::array();
  for (const ReportChart& chart : charts) data["charts"].push_back(chart.to_json());

  // Chart.js 3 (MIT licence), inline: the page needs nothing beside it.
  out += "<script>\n";
  out += chart_library_js();
  out += "\n</script>\n";
  out += "<script type=\"application/json\" id=\"etwire-report-data\">";
  out += script_safe_json(data);
  out += "</script>\n<script>";
  out += kScript;
  out += "</script>\n</body>\n</html>\n";
  return out;
}

void write_html_report(const std::vector<ReportRun>& runs, const std::string& path,
                       const RunComparison* comparison) {
  write_file_atomically(path, html_report(runs, comparison));
}

}  // namespace etwire::outputs::report

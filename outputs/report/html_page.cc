#include "outputs/report/html_page.h"

#include <fmt/format.h>

#include "outputs/report/chart_library.h"
#include "outputs/report/html_tables.h"

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

std::string html_page_start(std::string_view title) {
  std::string out = "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n";
  out += fmt::format("<title>{}</title>\n<style>{}</style>\n</head>\n<body>\n", html_escape(title),
                     kStyle);
  out += fmt::format("<h1>{}</h1>\n", html_escape(title));
  return out;
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

void append_html_page_end(const std::vector<ReportChart>& charts, nlohmann::json runs,
                          std::string& out) {
  nlohmann::json data;
  data["runs"] = std::move(runs);
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
}

}  // namespace etwire::outputs::report

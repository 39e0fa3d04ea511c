#include "outputs/sweep_report.h"

#include <fmt/format.h>

#include <algorithm>

#include "collectives/bandwidth.h"
#include "collectives/nccl_sizes.h"
#include "common/text_table.h"
#include "config/enum_names.h"
#include "outputs/results_files.h"

namespace etwire::outputs {

namespace {

constexpr double kPercent = 100;

// Every line of `text` as an nccl-tests comment: "# " before it. nccl-tests' readers take the
// lines that do not start with '#' for measurements.
std::string commented(const std::string& text) {
  std::string out;
  size_t start = 0;
  while (start < text.size()) {
    const size_t end = std::min(text.find('\n', start), text.size());
    // An empty line is "#" alone, as nccl-tests prints it.
    out += end == start ? "#" : "# ";
    out.append(text, start, end - start);
    out += '\n';
    start = end + 1;
  }
  return out;
}

// A table of measurements as nccl-tests prints one: the header a comment, each row of
// `measured` indented as much, so the columns stay aligned; a row without a measurement (a size
// whose run failed or was not run) is a comment too, which nccl-tests' readers skip.
std::string measurement_table(const TextTable& table, const std::vector<bool>& measured) {
  const std::string text = table.render();
  std::string out;
  size_t start = 0;
  for (size_t line = 0; start < text.size(); ++line) {
    const size_t end = std::min(text.find('\n', start), text.size());
    out += line > 0 && measured[line - 1] ? "  " : "# ";
    out.append(text, start, end - start);
    out += '\n';
    start = end + 1;
  }
  return out;
}

void append_series(const SweepResults& sweep, const SweepFit& series, std::string& out) {
  const bool all_completed = std::all_of(
      sweep.points.begin(), sweep.points.end(),
      [&](const SweepPoint& p) { return !in_series(p, series) || p.status == "completed"; });
  std::vector<std::string> header{"size",    "count",      "type",       "redop",  "root",
                                  "time_us", "algbw_GBps", "busbw_GBps", "ideal_%"};
  // The protocol column only where a series ran one other than Simple (collectives.protocol).
  const bool protocols = std::any_of(sweep.points.begin(), sweep.points.end(), [](const auto& p) {
    return p.protocol && *p.protocol != config::Protocol::kSimple;
  });
  if (series.tuned) header.emplace_back("algorithm");
  if (protocols) header.emplace_back("protocol");
  if (!all_completed) header.emplace_back("status");
  TextTable table(header);
  std::vector<bool> measured;
  for (const SweepPoint& p : sweep.points) {
    if (!in_series(p, series)) continue;
    std::vector<std::string> row{
        std::to_string(p.bytes),
        std::to_string(collectives::nccl_count(p.kind, p.bytes, sweep.ranks)),
        std::string(collectives::kNcclElementType), std::string(collectives::nccl_redop(p.kind)),
        std::to_string(collectives::nccl_root(p.kind))};
    if (p.measured) {
      row.push_back(time_us_cell(p.measured->cct_us));
      row.push_back(bandwidth_cell(p.measured->algbw_gbps));
      row.push_back(bandwidth_cell(p.measured->busbw_gbps));
      row.push_back(percent_cell(p.measured->ideal_percent));
    } else {
      row.insert(row.end(), 4, "-");
    }
    if (series.tuned) row.push_back(point_algorithm(p));
    if (protocols) {
      row.push_back(p.protocol ? std::string(config::name_of(config::protocol_names(), *p.protocol))
                               : "-");
    }
    if (!all_completed) row.push_back(p.status);
    table.add_row(row);
    measured.push_back(p.measured.has_value());
  }
  out += commented(fmt::format("\n{}, {}, {} ranks (busbw = algbw x {})",
                               collective_type_label(series.kind), series_algorithm(series),
                               sweep.ranks, collectives::busbw_formula(series.kind)));
  out += measurement_table(table, measured);
  // nccl-tests' last line, which its readers look for: the mean busbw of the sizes measured.
  out += fmt::format("# Avg bus bandwidth    : {:.3f}\n", series.average_busbw_gbps);
}

void append_fits(const std::vector<SweepFit>& fits, std::string& out) {
  TextTable table({"collective", "algorithm", "sizes", "alpha_us", "beta_GBps", "beta_alg_GBps",
                   "rms_err_%", "max_err_%"});
  for (const SweepFit& f : fits) {
    std::vector<std::string> row{collective_type_label(f.kind), series_algorithm(f)};
    if (!f.fit) {
      row.insert(row.end(), 6, "-");
      table.add_row(row);
      continue;
    }
    const auto beta = f.fit->beta_gb_per_second();
    row.push_back(std::to_string(f.fit->points));
    row.push_back(time_us_cell(f.fit->alpha_us));
    row.push_back(beta ? bandwidth_cell(*beta) : "-");
    row.push_back(beta ? bandwidth_cell(*beta / f.busbw_factor) : "-");
    row.push_back(percent_cell(f.fit->rms_relative_error * kPercent));
    row.push_back(percent_cell(f.fit->max_relative_error * kPercent));
    table.add_row(row);
  }
  out += commented(
      "\nAlpha-beta fit: time = alpha + size x busbw factor / beta (least squares of the relative "
      "error; beta_alg = beta / factor)");
  out += commented(table.render());
}

}  // namespace

std::string sweep_report(const SweepResults& sweep) {
  std::string out = commented(fmt::format(
      "Sweep of {}: {} ranks, {} to {} bytes by x{}, {} measured iteration{} after {} warm-up; "
      "time: mean CCT from the last arrival; GB/s = 1e9 B/s; ideal %: of {:.2f} GB/s goodput",
      sweep.run_name.empty() ? sweep.config_file : sweep.run_name, sweep.ranks, sweep.min_bytes,
      sweep.max_bytes, sweep.step_factor, sweep.iterations, sweep.iterations == 1 ? "" : "s",
      sweep.warmup_iterations, sweep.goodput_bytes_per_second / 1e9));
  const std::vector<SweepFit> fits = fit_sweep(sweep);
  for (const SweepFit& series : fits) append_series(sweep, series, out);
  if (!fits.empty()) append_fits(fits, out);
  for (const std::string& note : sweep.notes) out += fmt::format("# Note: {}\n", note);
  for (const std::string& error : sweep.errors) out += fmt::format("# Error: {}\n", error);
  return out;
}

}  // namespace etwire::outputs

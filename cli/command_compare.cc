// `etwire compare A B`: two results directories side by side (the twin's prediction against the
// lab's measurement, two configurations, two builds), or repeated runs of each (A1,A2 B1,B2, or
// the results directory of `etwire run --repeat N`):
// per collective type CCT, busbw, ideal % and FCT percentiles, the JCT of each measured iteration
// and the congestion counters, each with A, B and the delta. With --tolerance, a delta beyond it
// exits 4, so a lab can gate a change on it.
#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <filesystem>
#include <iostream>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "cli/commands.h"
#include "cli/results_input.h"
#include "outputs/compare/comparison_report.h"
#include "outputs/compare/repeated_comparison.h"
#include "outputs/compare/run_comparison.h"
#include "outputs/repeat_series.h"
#include "outputs/report/html_report.h"
#include "runner/exit_codes.h"

namespace etwire::cli {

namespace {

struct CompareOptions {
  std::string dir_a;
  std::string dir_b;
  std::vector<std::string> tolerances;
  std::string json;
  std::string labels;
  std::string report;
};

// A side: one results directory, or the directories of its repeated runs, comma-separated.
std::vector<std::string> side_dirs(const std::string& text) {
  std::vector<std::string> dirs;
  size_t start = 0;
  while (true) {
    const size_t comma = text.find(',', start);
    dirs.push_back(
        text.substr(start, comma == std::string::npos ? std::string::npos : comma - start));
    if (comma == std::string::npos) return dirs;
    start = comma + 1;
  }
}

// A side's runs: each directory listed, a repeated run's directory (`etwire run --repeat`) standing
// for its repeats.
struct Side {
  std::vector<outputs::RunDigest> runs;
  // The one directory given when it held repeats: it names the side, where its runs' own
  // directories (repeat-1, ...) would not.
  std::optional<std::filesystem::path> series;
};

Side read_side(const std::string& text, const char* side) {
  Side out;
  const std::vector<std::string> dirs = side_dirs(text);
  for (const std::string& dir : dirs) {
    if (dir.empty()) {
      throw outputs::CompareInputError(
          fmt::format("{} \"{}\": an empty directory name in the list", side, text));
    }
    std::optional<std::vector<std::filesystem::path>> repeats;
    try {
      repeats = outputs::read_repeat_dirs(dir);
    } catch (const outputs::RepeatSeriesError& e) {
      throw outputs::CompareInputError(e.what());
    }
    if (!repeats) {
      out.runs.push_back(outputs::read_run_digest(dir));
      continue;
    }
    for (const std::filesystem::path& repeat : *repeats) {
      out.runs.push_back(outputs::read_run_digest(repeat));
    }
    if (dirs.size() == 1) out.series = dir;
  }
  return out;
}

// The default labels: a series by its own directory's name, a run by its directory's.
std::pair<std::string, std::string> side_labels(const Side& a, const Side& b) {
  outputs::RunDigest first_a = a.runs.front(), first_b = b.runs.front();
  if (a.series) first_a.dir = *a.series;
  if (b.series) first_b.dir = *b.series;
  return outputs::default_labels(first_a, first_b);
}

// "--labels pred,meas": two non-empty names.
bool parse_labels(const std::string& text, std::string& a, std::string& b) {
  const size_t comma = text.find(',');
  if (comma == std::string::npos || text.find(',', comma + 1) != std::string::npos) return false;
  a = text.substr(0, comma);
  b = text.substr(comma + 1);
  return !a.empty() && !b.empty();
}

}  // namespace

CommandAction add_compare_command(CLI::App& app) {
  auto opts = std::make_shared<CompareOptions>();
  auto* cmd = app.add_subcommand(
      "compare",
      "Compare two results directories of `etwire run` (A, the reference, and B), or repeated "
      "runs of each: per collective type CCT, busbw, ideal % and FCT percentiles, JCT per "
      "measured iteration and congestion counters, each with A, B, delta and delta % (over "
      "repeats: means, spreads and the delta's 95 % confidence interval). Exit 0, 2 for a missing "
      "directory or summary.json, a malformed summary.json (named with the JSON path) or runs with "
      "no collective type in common, 4 when a delta is "
      "beyond --tolerance.");
  cmd->add_option("A", opts->dir_a,
                  "The reference results directory (e.g. the prediction); or the directories of "
                  "repeated runs, comma-separated, or the results directory of `etwire run "
                  "--repeat N` (its repeats): each metric is then their mean")
      ->required();
  cmd->add_option("B", opts->dir_b,
                  "The results directory compared with it (e.g. the lab run), or several; with "
                  "repeats a tolerance flags a metric only when the 95 % confidence interval of "
                  "its delta lies beyond it")
      ->required();
  cmd->add_option("--tolerance", opts->tolerances,
                  "Flag deltas beyond PCT percent of A and exit 4: PCT for every metric, or "
                  "METRIC=PCT for one (cct, cct_p50, busbw, ideal, fct_p50, fct_p99, fct_max, "
                  "jct, congestion or a counter such as drops); repeatable")
      ->allow_extra_args(false);
  cmd->add_option("--json", opts->json, "Also write the comparison as JSON to this file");
  cmd->add_option("--report", opts->report,
                  "Also write the HTML report of both runs to this file, every chart overlaying "
                  "them (as etwire report draws one run)");
  cmd->add_option("--labels", opts->labels,
                  "Names of the two sides, A,B (default: the directory names, else the run "
                  "names)");
  return [opts]() -> int {
    outputs::Tolerances tolerances;
    try {
      for (const std::string& t : opts->tolerances) tolerances.add(t);
    } catch (const std::invalid_argument& e) {
      std::cerr << fmt::format("error: {}\n", e.what());
      return runner::kExitBadInput;
    }
    std::string label_a, label_b;
    if (!opts->labels.empty() && !parse_labels(opts->labels, label_a, label_b)) {
      std::cerr << fmt::format("error: --labels {}: expected two names, A,B\n", opts->labels);
      return runner::kExitBadInput;
    }
    outputs::RunComparison comparison;
    std::vector<std::string> not_completed;  // said last, after the tables
    try {
      Side a = read_side(opts->dir_a, "A");
      Side b = read_side(opts->dir_b, "B");
      spdlog::debug("read the summary.json of {} and {} runs", a.runs.size(), b.runs.size());
      if (label_a.empty()) std::tie(label_a, label_b) = side_labels(a, b);
      for (const auto& [label, side] : {std::pair{&label_a, &a}, std::pair{&label_b, &b}}) {
        for (const outputs::RunDigest& run : side->runs) {
          if (!run.status.empty() && run.status != "completed") {
            not_completed.push_back(fmt::format("warning: {} ({}) did not complete: status {}\n",
                                                *label, run.dir.string(), run.status));
          }
        }
      }
      comparison = outputs::compare_repeats(std::move(a.runs), std::move(b.runs), tolerances,
                                            label_a, label_b);
    } catch (const outputs::CompareInputError& e) {
      std::cerr << fmt::format("error: {}\n", e.what());
      return runner::kExitBadInput;
    }
    std::cout << outputs::comparison_text(comparison) << std::flush;
    if (!opts->json.empty()) {
      try {
        outputs::write_comparison_json(comparison, opts->json);
        spdlog::debug("wrote {}", opts->json);
      } catch (const std::exception& e) {
        std::cerr << fmt::format("error: {}\n", e.what());
        return runner::kExitFailure;
      }
    }
    if (!opts->report.empty()) {
      const int code = read_results_then_write([&] {
        // The charts overlay each side's first run.
        outputs::report::write_html_report(
            {outputs::report::load_report_run(comparison.a.dir, comparison.label_a),
             outputs::report::load_report_run(comparison.b.dir, comparison.label_b)},
            opts->report, &comparison);
      });
      if (code != runner::kExitOk) return code;
      spdlog::debug("wrote {}", opts->report);
    }
    for (const std::string& warning : not_completed) std::cerr << warning;
    return comparison.exceeded() > 0 ? runner::kExitBeyondTolerance : runner::kExitOk;
  };
}

}  // namespace etwire::cli

// `etwire compare A B`: two results directories side by side (the twin's prediction against the
// lab's measurement, two configurations, two builds), or repeated runs of each (A1,A2 B1,B2):
// per collective type CCT, busbw, ideal % and FCT percentiles, the JCT of each measured iteration
// and the congestion counters, each with A, B and the delta. With --tolerance, a delta beyond it
// exits 4, so a lab can gate a change on it.
#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <iostream>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "cli/results_input.h"
#include "outputs/compare/comparison_report.h"
#include "outputs/compare/repeated_comparison.h"
#include "outputs/compare/run_comparison.h"
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

std::vector<outputs::RunDigest> read_side(const std::string& text, const char* side) {
  std::vector<outputs::RunDigest> runs;
  for (const std::string& dir : side_dirs(text)) {
    if (dir.empty()) {
      throw outputs::CompareInputError(
          fmt::format("{} \"{}\": an empty directory name in the list", side, text));
    }
    runs.push_back(outputs::read_run_digest(dir));
  }
  return runs;
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
                  "repeated runs, comma-separated: each metric is then their mean")
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
    try {
      std::vector<outputs::RunDigest> a = read_side(opts->dir_a, "A");
      std::vector<outputs::RunDigest> b = read_side(opts->dir_b, "B");
      spdlog::debug("read the summary.json of {} and {} runs", a.size(), b.size());
      if (label_a.empty()) {
        std::tie(label_a, label_b) = outputs::default_labels(a.front(), b.front());
      }
      comparison =
          outputs::compare_repeats(std::move(a), std::move(b), tolerances, label_a, label_b);
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
    for (const auto& [label, run] : {std::pair{&comparison.label_a, &comparison.a},
                                     std::pair{&comparison.label_b, &comparison.b}}) {
      if (!run->status.empty() && run->status != "completed") {
        std::cerr << fmt::format("warning: {} ({}) did not complete: status {}\n", *label,
                                 run->dir.string(), run->status);
      }
    }
    return comparison.exceeded() > 0 ? runner::kExitBeyondTolerance : runner::kExitOk;
  };
}

}  // namespace etwire::cli

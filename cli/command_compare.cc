// `etwire compare A B`: two results directories side by side (the twin's prediction against the
// lab's measurement, two configurations, two builds): per collective type CCT, busbw, ideal % and
// FCT percentiles, the JCT of each measured iteration and the congestion counters, each with A, B
// and the delta. With --tolerance, a delta beyond it exits 4, so a lab can gate a change on it.
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
      "Compare two results directories of `etwire run` (A, the reference, and B): per "
      "collective type CCT, busbw, ideal % and FCT percentiles, JCT per measured iteration and "
      "congestion counters, each with A, B, delta and delta %. Exit 0, 2 for a missing "
      "directory or summary.json, a malformed summary.json (named with the JSON path) or runs with "
      "no collective type in common, 4 when a delta is "
      "beyond --tolerance.");
  cmd->add_option("A", opts->dir_a, "The reference results directory (e.g. the prediction)")
      ->required();
  cmd->add_option("B", opts->dir_b, "The results directory compared with it (e.g. the lab run)")
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
      outputs::RunDigest a = outputs::read_run_digest(opts->dir_a);
      outputs::RunDigest b = outputs::read_run_digest(opts->dir_b);
      spdlog::debug("read {}/summary.json and {}/summary.json", opts->dir_a, opts->dir_b);
      if (label_a.empty()) std::tie(label_a, label_b) = outputs::default_labels(a, b);
      comparison = outputs::compare_runs(std::move(a), std::move(b), tolerances, label_a, label_b);
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
        outputs::report::write_html_report(
            {outputs::report::load_report_run(opts->dir_a, comparison.label_a),
             outputs::report::load_report_run(opts->dir_b, comparison.label_b)},
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

// `etwire report RUN_DIR [-o FILE]`: one self-contained HTML page of a run's results (default
// RUN_DIR/report.html) that opens offline: the nccl-tests table, busbw per iteration, the FCT CDF
// per collective type, port throughput, queue depth and congestion counters over time; of a
// sweep's directory, busbw and time against size (outputs/report/sweep_page.h). Exit 0
// with the page written; 2 when RUN_DIR is not a results directory or a file in it is malformed
// (the message names the file and line); 1 when the page cannot be written.
#include <filesystem>
#include <iostream>
#include <memory>

#include "cli/commands.h"
#include "cli/results_input.h"
#include "outputs/output_file.h"
#include "outputs/report/html_report.h"
#include "outputs/report/sweep_page.h"
#include "outputs/results_files.h"
#include "runner/exit_codes.h"

namespace etwire::cli {

namespace {

struct ReportOptions {
  std::string run_dir;
  std::string out;
};

}  // namespace

CommandAction add_report_command(CLI::App& app) {
  auto opts = std::make_shared<ReportOptions>();
  CLI::App* sub = app.add_subcommand(
      "report",
      "Write one self-contained HTML page of a run's results (opens offline): the nccl-tests "
      "table, busbw per iteration, the FCT CDF per collective type, port throughput, queue depth "
      "and congestion counters over time. Of an etwire sweep's directory: busbw and time against "
      "size per series, and every size's row.");
  sub->add_option("RUN_DIR", opts->run_dir,
                  "A results directory of etwire run (summary.json) or of etwire sweep "
                  "(sweep.csv)")
      ->required();
  sub->add_option("-o,--out", opts->out, "The HTML file to write (default RUN_DIR/report.html)");
  return [opts]() -> int {
    namespace report = outputs::report;
    const std::string out = opts->out.empty()
                                ? (std::filesystem::path(opts->run_dir) / "report.html").string()
                                : opts->out;
    const int code = read_results_then_write([&] {
      if (report::is_sweep_dir(opts->run_dir)) {
        outputs::write_file_atomically(out, report::sweep_html(opts->run_dir));
      } else {
        report::write_html_report(
            {report::load_report_run(opts->run_dir, std::filesystem::path(opts->run_dir).string())},
            out);
      }
    });
    if (code == runner::kExitOk) std::cout << out << "\n";
    return code;
  };
}

}  // namespace etwire::cli

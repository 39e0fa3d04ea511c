// The HTML page of `etwire report`: one self-contained file (Chart.js and the data inline) that
// opens offline in any browser. It shows, per run, the nccl-tests-style table and the FCT
// percentiles as the console prints them, then the charts: busbw per iteration, the FCT CDF per
// collective type, each port's throughput, the twin's queue depths and the congestion counters
// over time. Given several runs (a comparison), every chart overlays them, each run's series
// named by its label. The page's frame (style, Chart.js, the drawing script) is html_page.h's.
#pragma once

#include <string>
#include <vector>

#include "outputs/compare/run_comparison.h"
#include "outputs/report/report_run.h"

namespace etwire::outputs::report {

// Reads the runs' CSV files as it goes; throws ReportInputError for a malformed one. With a
// comparison of the runs (etwire compare --report), its verdict and delta tables come first.
std::string html_report(const std::vector<ReportRun>& runs,
                        const RunComparison* comparison = nullptr);
// Writes html_report(runs, comparison) to `path`; throws ReportInputError as html_report does,
// and std::runtime_error("<path>: <reason>") when the file cannot be written.
void write_html_report(const std::vector<ReportRun>& runs, const std::string& path,
                       const RunComparison* comparison = nullptr);

}  // namespace etwire::outputs::report

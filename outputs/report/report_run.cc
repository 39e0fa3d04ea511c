#include "outputs/report/report_run.h"

#include <fmt/format.h>

#include "outputs/report/report_input_error.h"
#include "outputs/report/summary_reader.h"

namespace etwire::outputs::report {

ReportRun load_report_run(const std::filesystem::path& dir, std::string label) {
  std::error_code error;
  if (!std::filesystem::is_directory(dir, error)) {
    throw ReportInputError(
        fmt::format("{}: not a directory (expected a run's results directory)", dir.string()));
  }
  const std::filesystem::path summary = dir / "summary.json";
  if (!std::filesystem::exists(summary, error)) {
    throw ReportInputError(fmt::format(
        "{}: no such file: {} is not a run's results directory (etwire run writes summary.json)",
        summary.string(), dir.string()));
  }
  return {std::move(label), dir, read_summary_json(summary.string())};
}

}  // namespace etwire::outputs::report

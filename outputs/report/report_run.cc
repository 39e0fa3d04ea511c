#include "outputs/report/report_run.h"

#include <fmt/format.h>

#include "outputs/report/qps_csv_reader.h"
#include "outputs/report/report_input_error.h"
#include "outputs/report/summary_reader.h"

namespace etwire::outputs::report {

namespace {

// Whether `path` exists; an error other than its absence is the input's problem, said by name.
bool present(const std::filesystem::path& path) {
  std::error_code error;
  const std::filesystem::file_status status = std::filesystem::status(path, error);
  if (error && status.type() != std::filesystem::file_type::not_found) {
    throw ReportInputError(fmt::format("{}: not readable: {}", path.string(), error.message()));
  }
  return status.type() != std::filesystem::file_type::not_found;
}

}  // namespace

bool ReportRun::has(const char* name) const {
  return present(file(name));
}

ReportRun load_report_run(const std::filesystem::path& dir, std::string label) {
  std::error_code error;
  if (!present(dir) || !std::filesystem::is_directory(dir, error)) {
    throw ReportInputError(
        fmt::format("{}: not a directory (expected a run's results directory)", dir.string()));
  }
  const std::filesystem::path summary = dir / "summary.json";
  if (!present(summary)) {
    throw ReportInputError(fmt::format(
        "{}: no such file: {} is not a run's results directory (etwire run writes summary.json)",
        summary.string(), dir.string()));
  }
  ReportRun run{std::move(label), dir, read_summary_json(summary.string())};
  // Small (a row per QP half) and read whole: the table of the QPs that met most congestion.
  if (run.has("qps.csv")) read_qps_csv(run.file("qps.csv"), run.results);
  return run;
}

}  // namespace etwire::outputs::report

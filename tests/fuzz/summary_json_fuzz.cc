// summary.json as `etwire report` and `etwire compare` read it: the bounded parser, the report's
// reader and the compare digest on the same bytes, then what each renders of what it read (the
// HTML page without the CSV files, the comparison of the run with itself as text and JSON).
// ReportInputError and CompareInputError are how they refuse bad input; anything else escaping
// is a finding.
#include <cstddef>
#include <cstdint>
#include <string>

#include "outputs/compare/comparison_report.h"
#include "outputs/compare/run_comparison.h"
#include "outputs/compare/run_digest.h"
#include "outputs/report/html_report.h"
#include "outputs/report/report_input_error.h"
#include "outputs/report/summary_reader.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace etwire::outputs;
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    report::ReportRun run{"fuzz", "/nonexistent/etwire-fuzz", {}};
    run.results = report::summary_from_text(text, "fuzz/summary.json");
    try {
      volatile size_t page = report::html_report({run}).size();
      (void)page;
    } catch (const report::ReportInputError&) {
      // A chart's CSV file is missing: the directory does not exist.
    }
  } catch (const report::ReportInputError&) {
  }
  try {
    RunDigest a = digest_summary_json(text, "fuzz/summary.json");
    RunDigest b = a;
    const RunComparison comparison = compare_runs(std::move(a), std::move(b), {}, "a", "b");
    volatile size_t out = comparison_text(comparison).size() + comparison_json(comparison).size();
    (void)out;
  } catch (const CompareInputError&) {
  }
  return 0;
}

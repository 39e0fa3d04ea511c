// A RunComparison for people (a console table per section) and for tools (JSON).
#pragma once

#include <string>
#include <vector>

#include "outputs/compare/run_comparison.h"
#include "outputs/result_tables.h"

namespace etwire::outputs {

// A section of the comparison as a table: subject, metric, A, B, delta, delta % and, when
// tolerances were given, a flag column ("! >5%" beyond the tolerance, "ok" within it). `beyond`
// marks the rows beyond their tolerance. Sections without a row are left out.
struct ComparisonSection {
  std::string title;
  TableCells table;
  std::vector<bool> beyond;
};
std::vector<ComparisonSection> comparison_sections(const RunComparison& comparison);

// "Within tolerance: no delta beyond it." or "Beyond tolerance: N metrics (marked !)."; empty
// when no tolerance was given.
std::string tolerance_verdict(const RunComparison& comparison);

// One line per run, then per section a table: subject, metric, A, B, delta, delta % and a flag
// column ("!" beyond the tolerance, "ok" within it, empty with no tolerance), then a verdict line
// when tolerances were given.
std::string comparison_text(const RunComparison& comparison);

// Repeated runs of one configuration (`etwire run --repeat N`), per section a table: each
// metric's mean over the runs, its sample standard deviation, the coefficient of variation (sd
// over mean, in %) and how many runs have it; what a lab reads to choose a tolerance its runs can
// hold. `runs` has at least one run.
std::string repeat_spread_text(const std::vector<RunDigest>& runs);

// {"a": {...run}, "b": {...}, "tolerances": {...}, "metrics": [...], "only_in_a": [...],
//  "only_in_b": [...], "exceeded": N}; absent values are null.
std::string comparison_json(const RunComparison& comparison);

// Writes comparison_json to `path`; throws std::runtime_error("<path>: <reason>").
void write_comparison_json(const RunComparison& comparison, const std::string& path);

}  // namespace etwire::outputs

// A RunComparison for people (a console table per section) and for tools (JSON).
#pragma once

#include <string>

#include "outputs/compare/run_comparison.h"

namespace etwire::outputs {

// One line per run, then per section a table: subject, metric, A, B, delta, delta % and a flag
// column ("!" beyond the tolerance, "ok" within it, empty with no tolerance), then a verdict line
// when tolerances were given.
std::string comparison_text(const RunComparison& comparison);

// {"a": {...run}, "b": {...}, "tolerances": {...}, "metrics": [...], "only_in_a": [...],
//  "only_in_b": [...], "exceeded": N}; absent values are null.
std::string comparison_json(const RunComparison& comparison);

// Writes comparison_json to `path`; throws std::runtime_error("<path>: <reason>").
void write_comparison_json(const RunComparison& comparison, const std::string& path);

}  // namespace etwire::outputs

// The top of `etwire compare --report`'s page: the verdict against the tolerances, pass or fail,
// then each section of the comparison (compare/comparison_report.h) as a table of A, B and their
// delta, the rows beyond their tolerance marked: what a ticket needs before the charts.
#pragma once

#include <string>

#include "outputs/compare/run_comparison.h"

namespace etwire::outputs::report {

void append_comparison_html(const RunComparison& comparison, std::string& out);

}  // namespace etwire::outputs::report

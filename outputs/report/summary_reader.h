// Reads a run's summary.json back into RunResults: what write_summary_json wrote, so a report
// (and a comparison of two runs) computes its tables with the same code as the console. Fields a
// report does not need (per-rank iteration times, per-queue shares of a port) are left empty;
// unknown keys are ignored, so a summary from a later version still reads.
#pragma once

#include <string>

#include "engine/run_results.h"

namespace etwire::outputs::report {

// Throws ReportInputError "<path>: <record>: <what>" when the file cannot be read or a field the
// report needs is missing or of the wrong type.
engine::RunResults read_summary_json(const std::string& path);

}  // namespace etwire::outputs::report

// Reads a run's summary.json back into RunResults: what write_summary_json wrote, so a report
// (and a comparison of two runs) computes its tables with the same code as the console. Every
// field of the records' lists (engine/result_fields.h) that summary.json shows is read back;
// what it shows only between processes (the QPs one by one, p2p ranks) is left empty. A key the
// file leaves out reads as the member's default, so a summary from before a field was added still
// reads; unknown keys are ignored, so a summary from a later version still reads.
#pragma once

#include <string>

#include "engine/run_results.h"

namespace etwire::outputs::report {

// Throws ReportInputError "<path>: <record>: <what>" when the file cannot be read, has no
// "status" or "run", or holds a field of the wrong type (or a job, status, type or algorithm it
// does not know).
engine::RunResults read_summary_json(const std::string& path);

// The same, of a summary.json's text already read; `path` names it in errors.
engine::RunResults summary_from_text(const std::string& text, const std::string& path);

}  // namespace etwire::outputs::report

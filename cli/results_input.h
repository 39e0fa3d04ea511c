// What report, timeline and compare --report share: reading a results directory and writing a
// file from it, with the exit code that says whose fault a failure was.
#pragma once

#include <functional>

namespace etwire::cli {

// Runs `read_then_write`. A results directory that cannot be read (ReportInputError) prints
// "error: ..." and returns kExitBadInput; any other std::runtime_error (the output cannot be
// written) prints it and returns kExitFailure; else kExitOk.
int read_results_then_write(const std::function<void()>& read_then_write);

}  // namespace etwire::cli

#include "cli/results_input.h"

#include <fmt/format.h>

#include <iostream>
#include <stdexcept>

#include "outputs/report/report_input_error.h"
#include "runner/exit_codes.h"

namespace etwire::cli {

int read_results_then_write(const std::function<void()>& read_then_write) {
  try {
    read_then_write();
  } catch (const outputs::report::ReportInputError& e) {
    std::cerr << fmt::format("error: {}\n", e.what());
    return runner::kExitBadInput;
  } catch (const std::runtime_error& e) {
    std::cerr << fmt::format("error: {}\n", e.what());
    return runner::kExitFailure;
  }
  return runner::kExitOk;
}

}  // namespace etwire::cli

// A results directory `etwire report` cannot read: a missing summary.json, a malformed file. The
// message names the file (and its line or record).
#pragma once

#include <stdexcept>

namespace etwire::outputs::report {

class ReportInputError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace etwire::outputs::report

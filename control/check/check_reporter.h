// Where the checks report: each problem located through the source map at its key path, into the
// load's diagnostics. Internal to control/.
#pragma once

#include <string>
#include <utility>

#include "control/load/diagnostic.h"
#include "control/load/source_map.h"

namespace etwire::control {

class CheckReporter {
 public:
  CheckReporter(const SourceMap& where, Diagnostics& out) : where_(where), out_(out) {}

  void error(Problem problem, const std::string& path, std::string message) {
    out_.add(where_.make(Severity::kError, problem, path, std::move(message)));
  }
  void warning(Problem problem, const std::string& path, std::string message) {
    out_.add(where_.make(Severity::kWarning, problem, path, std::move(message)));
  }
  const SourceMap& where() const { return where_; }

 private:
  const SourceMap& where_;
  Diagnostics& out_;
};

}  // namespace etwire::control

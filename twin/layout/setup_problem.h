// A configuration the fabric twin cannot be built from, as a value: the configuration key to
// blame and why. The checks made before a run read these values (twin/fabric/setup_problems.h);
// the twin's constructors throw them as a SetupError, whose message says the same in one line.
#pragma once

#include <stdexcept>
#include <string>
#include <utility>

namespace etwire::twin {

struct SetupProblem {
  // A key path ("fabric.buffer.ingress_reserve", "fabric.faults[2]"), or "fabric" when no one
  // key is to blame.
  std::string key = "fabric";
  std::string why;

  // "fabric twin: <key>: <why>", or "fabric twin: <why>" when the key is "fabric".
  std::string message() const;
};

class SetupError : public std::invalid_argument {
 public:
  explicit SetupError(SetupProblem problem)
      : std::invalid_argument(problem.message()), problem_(std::move(problem)) {}

  const SetupProblem& problem() const { return problem_; }

 private:
  SetupProblem problem_;
};

}  // namespace etwire::twin

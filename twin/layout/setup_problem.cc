#include "twin/layout/setup_problem.h"

namespace etwire::twin {

std::string SetupProblem::message() const {
  if (key == "fabric") return "fabric twin: " + why;
  return "fabric twin: " + key + ": " + why;
}

}  // namespace etwire::twin

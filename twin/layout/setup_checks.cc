#include "twin/layout/setup_checks.h"

#include <string>

namespace etwire::twin {

namespace {

// Keeps the first problem found. `where` is a key path ("fabric.ecn.pmax") or, for a port
// override, a description that names the port; the latter blames the fabric section.
class FirstProblem {
 public:
  void add(const std::string& where, const std::string& why) {
    if (first_) return;
    if (where.find(' ') == std::string::npos) {
      first_ = SetupProblem{where, why};
    } else {
      first_ = SetupProblem{"fabric", where + ": " + why};
    }
  }
  const std::optional<SetupProblem>& first() const { return first_; }

 private:
  std::optional<SetupProblem> first_;
};

void check_probability(FirstProblem& out, const std::string& where, double p) {
  if (!(p >= 0 && p <= 1))
    out.add(where, "must be between 0 and 1 (got " + std::to_string(p) + ")");
}

void check_ecn(FirstProblem& out, const std::string& where, const config::EcnMarking& ecn) {
  if (!ecn.enabled) return;
  if (ecn.kmin_bytes > ecn.kmax_bytes) {
    out.add(where, "kmin (" + std::to_string(ecn.kmin_bytes) + " B) is above kmax (" +
                       std::to_string(ecn.kmax_bytes) + " B)");
  }
  check_probability(out, where + ".pmax", ecn.pmax);
}

void check_pfc(FirstProblem& out, const std::string& where, const config::PfcConfig& pfc) {
  if (!pfc.enabled) return;
  if (pfc.xon_bytes >= pfc.xoff_bytes) {
    out.add(where, "xon (" + std::to_string(pfc.xon_bytes) + " B) must be below xoff (" +
                       std::to_string(pfc.xoff_bytes) + " B)");
  }
  for (uint8_t priority : pfc.priorities) {
    if (priority > 7) {
      out.add(where + ".priorities",
              "priority " + std::to_string(priority) + " is not an 802.1p class (0..7)");
    }
  }
}

}  // namespace

std::optional<SetupProblem> fabric_settings_problem(const config::FabricConfig& config) {
  FirstProblem out;
  if (config.buffer.size_bytes == 0) out.add("fabric.buffer.size", "is 0");
  check_ecn(out, "fabric.ecn", config.ecn);
  check_pfc(out, "fabric.pfc", config.pfc);
  check_probability(out, "fabric.drop_probability", config.drop_probability);
  for (const config::FabricPortOverride& entry : config.port_overrides) {
    const std::string where = "fabric override for port \"" + entry.port + "\"";
    check_ecn(out, where + " ecn", entry.ecn);
    check_pfc(out, where + " pfc", entry.pfc);
    check_probability(out, where + " drop_probability", entry.drop_probability);
  }
  return out.first();
}

const config::FabricConfig& check_fabric_settings(const config::FabricConfig& config) {
  if (auto problem = fabric_settings_problem(config)) throw SetupError(std::move(*problem));
  return config;
}

}  // namespace etwire::twin

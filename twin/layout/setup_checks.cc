#include "twin/layout/setup_checks.h"

#include <stdexcept>
#include <string>

namespace etwire::twin {

namespace {

[[noreturn]] void fail(const std::string& where, const std::string& message) {
  throw std::invalid_argument("fabric twin: " + where + ": " + message);
}

void check_probability(const std::string& where, double p) {
  if (!(p >= 0 && p <= 1)) fail(where, "must be between 0 and 1 (got " + std::to_string(p) + ")");
}

void check_ecn(const std::string& where, const config::EcnMarking& ecn) {
  if (!ecn.enabled) return;
  if (ecn.kmin_bytes > ecn.kmax_bytes) {
    fail(where, "kmin (" + std::to_string(ecn.kmin_bytes) + " B) is above kmax (" +
                    std::to_string(ecn.kmax_bytes) + " B)");
  }
  check_probability(where + ".pmax", ecn.pmax);
}

void check_pfc(const std::string& where, const config::PfcConfig& pfc) {
  if (!pfc.enabled) return;
  if (pfc.xon_bytes >= pfc.xoff_bytes) {
    fail(where, "xon (" + std::to_string(pfc.xon_bytes) + " B) must be below xoff (" +
                    std::to_string(pfc.xoff_bytes) + " B)");
  }
  for (uint8_t priority : pfc.priorities) {
    if (priority > 7) {
      fail(where + ".priorities", "priority " + std::to_string(priority) +
                                      " is not an 802.1p "
                                      "class (0..7)");
    }
  }
}

}  // namespace

void check_fabric_settings(const config::FabricConfig& config) {
  if (config.buffer.size_bytes == 0) fail("fabric.buffer.size", "is 0");
  check_ecn("fabric.ecn", config.ecn);
  check_pfc("fabric.pfc", config.pfc);
  check_probability("fabric.drop_probability", config.drop_probability);
  for (const config::FabricPortOverride& entry : config.port_overrides) {
    const std::string where = "fabric override for port \"" + entry.port + "\"";
    check_ecn(where + " ecn", entry.ecn);
    check_pfc(where + " pfc", entry.pfc);
    check_probability(where + " drop_probability", entry.drop_probability);
  }
}

}  // namespace etwire::twin

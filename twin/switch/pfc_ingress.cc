#include "twin/switch/pfc_ingress.h"

namespace etwire::twin {

PfcIngress::PfcIngress(const config::PfcConfig& config)
    : xoff_bytes_(config.xoff_bytes), xon_bytes_(config.xon_bytes) {
  if (!config.enabled) return;
  for (uint8_t priority : config.priorities) lossless_mask_ |= static_cast<uint8_t>(1u << priority);
}

}  // namespace etwire::twin

// The EAL starts once per process, with one set of arguments: every DPDK test of this binary asks
// for it here, and skips with the reason when it cannot start on the machine.
#pragma once

#include <optional>
#include <stdexcept>
#include <string>

#include "nic/dpdk/eal.h"

namespace etwire::nic::dpdk::testing {

inline const std::optional<std::string>& eal_failure() {
  static const std::optional<std::string> failure = []() -> std::optional<std::string> {
    try {
      start_eal({"--no-pci", "--no-huge", "--no-shconf", "-m", "512", "-l", "0", "--no-telemetry",
                 "--log-level=warning", "--vdev=net_null0"});
      return std::nullopt;
    } catch (const std::exception& e) {
      return std::string(e.what());
    }
  }();
  return failure;
}

}  // namespace etwire::nic::dpdk::testing

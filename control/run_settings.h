// `run:` — what identifies a run and bounds it, independent of the workload and the hardware.
#pragma once

#include <cstdint>
#include <string>

namespace etwire::control {

struct RunSettings {
  // Label used in results and metrics; defaults to the config file's name without extension.
  std::string name;
  // Seed for every random choice of a run (RED marking, drop injection), so a virtual-time run
  // is repeatable.
  uint64_t seed = 1;
  // Stop with a diagnosis when nothing progresses for this long (virtual time on the loopback
  // NIC, wall time on hardware backends).
  uint64_t watchdog_ns = 10'000'000'000;
};

}  // namespace etwire::control

// `run:` — what identifies a run and bounds it, independent of the workload and the hardware.
#pragma once

#include <cstdint>
#include <string>

namespace etwire::config {

struct RunSettings {
  // Label used in results and metrics; defaults to the config file's name without extension.
  std::string name;
  // Seed for every random choice of a run (RED marking, drop injection, sender jitter), so a
  // virtual-time run is repeatable.
  uint64_t seed = 1;
  // Stop with a diagnosis when nothing progresses for this long (virtual time on the loopback
  // NIC, wall time on hardware backends).
  uint64_t watchdog_ns = 10'000'000'000;
  // Virtual seconds replayed per wall-clock second on the loopback NIC; 0 = as fast as the
  // machine can. 1 replays in real time; 0.001 a thousand times slower, so a run of milliseconds
  // can be watched live in Grafana.
  double time_scale = 0;
};

}  // namespace etwire::config

// The rig a run's workers (worker.h) stand on when its ports are on the whole fabric twin in one
// process: a virtual clock and the twin of the configuration's fabric on it, seeded by run.seed;
// run port p is the twin's host port p. The loopback data plane deals its ports to workers on
// it; the software RNIC gives each of its device ports a worker of its own on it. Built in one
// place, so that both model the same fabric the same way: a verbs run on the software RNIC gives
// the loopback run's flows and times exactly.
#pragma once

#include <memory>
#include <vector>

#include "clock/virtual_clock.h"
#include "config/run_config.h"
#include "twin/fabric/fabric_twin.h"
#include "twin/layout/fabric_layout.h"

namespace etwire::dataplane {

class TwinRig {
 public:
  // One twin host per spec, in order (twin_ports, twin::run_port_specs), on `layout` when given:
  // the plan's, laid out from the same configuration and specs, which the twin then keeps a copy
  // of instead of laying it out again. Throws std::invalid_argument when the twin cannot model the
  // fabric (the twin's message).
  TwinRig(const config::RunConfig& config, const std::vector<twin::TwinPortSpec>& specs,
          const twin::FabricLayout* layout = nullptr);
  TwinRig(const TwinRig&) = delete;
  TwinRig& operator=(const TwinRig&) = delete;

  clock::VirtualClock& clock() { return clock_; }
  const clock::VirtualClock& clock() const { return clock_; }
  twin::FabricTwin& twin() { return *twin_; }
  const twin::FabricTwin& twin() const { return *twin_; }

 private:
  clock::VirtualClock clock_;
  std::unique_ptr<twin::FabricTwin> twin_;
};

}  // namespace etwire::dataplane

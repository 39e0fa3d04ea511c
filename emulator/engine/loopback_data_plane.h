// The data plane a run uses when its ports are loopback ports: a virtual clock, the fabric twin
// those ports are cabled to, and the transport on top, built from the run configuration. The run
// engine sees only the clock, the transport and per-port counters, so a hardware data plane can
// take its place.
#pragma once

#include <memory>
#include <vector>

#include "control/run_config.h"
#include "emulator/engine/run_results.h"
#include "nic/loopback/fabric_twin.h"
#include "traffic/clock/virtual_clock.h"
#include "traffic/transport/transport.h"

namespace etwire::engine {

class LoopbackDataPlane {
 public:
  // Throws std::invalid_argument when a port is not a loopback port or the fabric cannot be
  // modelled (the twin's message). `config` and `observer` must outlive the data plane.
  LoopbackDataPlane(const control::RunConfig& config, transport::FlowObserver& observer);

  clock::VirtualClock& clock() { return clock_; }
  transport::Transport& transport() { return *transport_; }
  nic::loopback::FabricTwin& twin() { return *twin_; }
  size_t ports() const { return specs_.size(); }

  // Counters of port `port` so far: its NIC side in the twin, the switch port facing it, and the
  // transport.
  PortRecord port_record(size_t port) const;
  // Per port: the sum of the DCQCN rates of its QPs with data to send, at most its line rate.
  void paced_rates_bps(std::vector<double>& per_port) const {
    transport_->paced_rates_bps(per_port);
  }
  // Payload bytes per second a port carries at full PMTU: pmtu / (pmtu + per-packet overhead) of
  // its line rate.
  double goodput_bytes_per_second(size_t port) const;

 private:
  const control::RunConfig& config_;
  std::vector<nic::loopback::TwinPortSpec> specs_;
  clock::VirtualClock clock_;
  std::unique_ptr<nic::loopback::FabricTwin> twin_;
  std::unique_ptr<transport::Transport> transport_;
};

}  // namespace etwire::engine

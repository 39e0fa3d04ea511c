// The data plane a run uses when its ports are loopback ports: a virtual clock, the fabric twin
// those ports are cabled to, and the transport on top, built from the run configuration.
#pragma once

#include <memory>
#include <vector>

#include "clock/virtual_clock.h"
#include "config/run_config.h"
#include "dataplane/data_plane.h"
#include "nic/loopback/fabric_twin.h"
#include "transport/transport.h"

namespace etwire::dataplane {

class LoopbackDataPlane final : public DataPlane {
 public:
  // Throws std::invalid_argument when a port is not a loopback port or the fabric cannot be
  // modelled (the twin's message). `config` and `observer` must outlive the data plane.
  LoopbackDataPlane(const config::RunConfig& config, transport::FlowObserver& observer);

  clock::Scheduler& scheduler() override { return clock_; }
  size_t ports() const override { return specs_.size(); }
  bool virtual_time() const override { return true; }
  clock::Nanos next_event_time() const override { return clock_.next_event_time(); }
  void poll() override { clock_.poll(); }
  uint64_t events_run() const override { return clock_.events_run(); }
  // Every port reaches every other through the twin. Packets carry the endpoints' QP numbers, as
  // frames would; the twin needs no addresses.
  transport::ConnectionId connect(const WireConnection& connection) override;
  void post(transport::ConnectionId connection, uint64_t bytes,
            const transport::FlowTags& tags) override {
    transport_->post(connection, bytes, tags);
  }
  uint32_t flows_in_progress() const override { return transport_->flows_in_progress(); }
  void paced_rates_bps(std::vector<double>& per_port) override {
    transport_->paced_rates_bps(per_port);
  }
  // Counters of port `port` so far: its NIC side in the twin, the switch port facing it, and the
  // transport.
  PortRecord port_record(size_t port) const override;

  clock::VirtualClock& clock() { return clock_; }
  nic::loopback::FabricTwin& twin() { return *twin_; }
  transport::Transport& transport() { return *transport_; }

 private:
  std::vector<nic::loopback::TwinPortSpec> specs_;
  clock::VirtualClock clock_;
  std::unique_ptr<nic::loopback::FabricTwin> twin_;
  std::unique_ptr<transport::Transport> transport_;
};

}  // namespace etwire::dataplane

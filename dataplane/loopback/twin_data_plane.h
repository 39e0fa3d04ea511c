// What the two data planes over the fabric twin share, the whole twin on one clock
// (LoopbackDataPlane) and the twin in partitions on clocks of their own (PartitionedDataPlane):
// the twin's ports, the flow join, the capture points at the twin's ports, a connection's halves
// opened on the workers of both its ends, and the ports' counters. Each subclass says which worker
// drives a port and where the twin's counters are.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "config/run_config.h"
#include "dataplane/data_plane.h"
#include "dataplane/flow_join.h"
#include "dataplane/loopback/twin_capture.h"
#include "dataplane/worker.h"
#include "twin/layout/fabric_layout.h"
#include "twin/wire_counters.h"

namespace etwire::dataplane {

class TwinDataPlane : public DataPlane {
 public:
  // The run's ports; the twin's aggregation hosts after them (twin::aggregation_hosts) are driven
  // like ports but are no run port: their traffic shows at the switch ports facing them.
  size_t ports() const override { return run_ports_; }
  bool virtual_time() const override { return true; }
  // The worker of each end's port opens that half, with the end's QP number. Every port reaches
  // every other through the twin, which needs no addresses.
  transport::ConnectionId connect(const WireConnection& connection) override;
  uint32_t flows_in_progress() const override { return static_cast<uint32_t>(join_.in_progress()); }
  void paced_rates_bps(std::vector<double>& per_port) override;
  // Counters of port `port` so far: its NIC side in the twin, the switch port facing it, and the
  // transport.
  PortCounters port_counters(size_t port) const override;
  PortRecord port_record(size_t port) const override;
  // What the configured faults (fabric.faults) did, and what the capture missed.
  std::vector<std::string> notes() const override;
  void finish() override;
  std::vector<std::string> switch_port_names() const override;

 protected:
  // Throws std::invalid_argument naming the first port that is not a loopback port.
  TwinDataPlane(const config::RunConfig& config, transport::FlowObserver& observer);

  // Whether this process drives port `port` (a twin spread over processes drives only the ports
  // of its partitions): worker_of() is only for those.
  virtual bool drives_here(uint32_t port) const {
    (void)port;
    return true;
  }
  virtual Worker& worker_of(uint32_t port) = 0;
  virtual const Worker& worker_of(uint32_t port) const = 0;
  virtual void for_each_worker(const std::function<void(Worker&)>& visit) = 0;
  virtual const twin::FabricLayout& layout() const = 0;
  virtual twin::WireCounters host_counters(size_t host) const = 0;
  virtual twin::WireCounters switch_port_counters(size_t switch_port) const = 0;
  virtual std::vector<std::string> fault_report() const = 0;
  // The transport's counters of run port `port`: its worker's.
  virtual transport::TransportPortCounters transport_counters(uint32_t port) const {
    return worker_of(port).counters(port);
  }

  // With telemetry.record.pcap, once the twin is built: a capture point at each port `attach`
  // hands to the twin (TwinCapture).
  void capture_if_recorded(const config::RunConfig& config, const TwinCapture::AttachTap& attach);
  // Starts the capture, if any, in <dir>/capture at the twin's time `now`.
  void begin_capture(const std::string& dir, clock::Nanos now);

  // The twin's hosts: the run's ports, then any aggregation hosts.
  const std::vector<twin::TwinPortSpec>& specs() const { return specs_; }
  FlowJoin& join() { return join_; }

 private:
  std::vector<twin::TwinPortSpec> specs_;
  size_t run_ports_ = 0;
  // Its capture points are the twin's frame taps: a member of the base, it outlives a
  // subclass's twin.
  std::unique_ptr<TwinCapture> capture_;
  FlowJoin join_;
};

}  // namespace etwire::dataplane

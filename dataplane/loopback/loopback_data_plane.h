// The data plane a run uses when its ports are loopback ports: a virtual clock, the fabric twin
// those ports are cabled to, and workers (worker.h) on top, built from the run configuration; the
// twin's ports are what this backend hands them, and the twin needs no polling. By default one
// worker drives every port. With several,
// the ports are dealt to them in turn and every worker runs on the one virtual clock, so a run is
// as deterministic as with one: connections between two workers' ports then have their halves on
// different transports, joined by the twin (packets) and the flow join (records), exactly as
// between cores or hosts.
#pragma once

#include <memory>
#include <vector>

#include "clock/virtual_clock.h"
#include "config/run_config.h"
#include "dataplane/data_plane.h"
#include "dataplane/flow_join.h"
#include "dataplane/loopback/twin_capture.h"
#include "dataplane/loopback/twin_queue_sampler.h"
#include "dataplane/worker.h"
#include "transport/transport.h"
#include "twin/fabric/fabric_twin.h"

namespace etwire::dataplane {

class LoopbackDataPlane final : public DataPlane {
 public:
  // Throws std::invalid_argument when a port is not a loopback port, the fabric cannot be
  // modelled (the twin's message) or `workers` is 0. `config` and `observer` must outlive the
  // data plane.
  LoopbackDataPlane(const config::RunConfig& config, transport::FlowObserver& observer,
                    uint32_t workers = 1);
  ~LoopbackDataPlane() override;

  clock::Scheduler& scheduler() override { return clock_; }
  size_t ports() const override { return specs_.size(); }
  bool virtual_time() const override { return true; }
  clock::Nanos next_event_time() const override { return clock_.next_event_time(); }
  void poll() override;
  uint64_t events_run() const override { return clock_.events_run(); }
  // The worker of each end's port opens that half, with the end's QP number. Every port reaches
  // every other through the twin, which needs no addresses.
  transport::ConnectionId connect(const WireConnection& connection) override;
  void post(transport::ConnectionId connection, uint64_t bytes,
            const transport::FlowTags& tags) override;
  uint32_t flows_in_progress() const override { return static_cast<uint32_t>(join_.in_progress()); }
  void paced_rates_bps(std::vector<double>& per_port) override;
  bool append_qp_stats(std::vector<transport::QpStats>& out) override;
  // Counters of port `port` so far: its NIC side in the twin, the switch port facing it, and the
  // transport.
  PortRecord port_record(size_t port) const override;
  PortCounters port_counters(size_t port) const override;

  // What the configured faults (fabric.faults) did.
  std::vector<std::string> notes() const override;
  void capture_frames(const std::string& dir) override;
  void finish() override;
  void sample_queues(QueueSink& sink, clock::Nanos interval_ns) override;
  std::vector<std::string> switch_port_names() const override;

  size_t workers() const { return workers_.size(); }

 private:
  // Ports are dealt to workers in turn.
  Worker& worker_of(uint32_t port) { return *workers_[port % workers_.size()]; }
  const Worker& worker_of(uint32_t port) const { return *workers_[port % workers_.size()]; }

  std::vector<twin::TwinPortSpec> specs_;
  clock::VirtualClock clock_;
  // With telemetry.record.pcap. Its capture points are the twin's frame taps: it goes after the
  // twin.
  std::unique_ptr<TwinCapture> capture_;
  std::unique_ptr<twin::FabricTwin> twin_;
  FlowJoin join_;
  std::vector<std::unique_ptr<Worker>> workers_;
  std::unique_ptr<TwinQueueSampler> sampler_;
};

}  // namespace etwire::dataplane

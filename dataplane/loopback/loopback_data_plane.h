// The data plane a run uses when its ports are loopback ports: a virtual clock and the fabric
// twin those ports are cabled to (a TwinRig), and workers (worker.h) on top, built from the run
// configuration; the twin's ports are what this backend hands them, and the twin needs no
// polling. By default one worker drives every port. With several, the ports are dealt to them in
// turn and every worker runs on the one virtual clock, so a run is as deterministic as with one:
// connections between two workers' ports then have their halves on different transports, joined
// by the twin (packets) and the flow join (records), exactly as between cores or hosts.
#pragma once

#include <memory>
#include <vector>

#include "config/run_config.h"
#include "dataplane/loopback/twin_data_plane.h"
#include "dataplane/loopback/twin_queue_sampler.h"
#include "dataplane/loopback/twin_rig.h"
#include "dataplane/worker.h"
#include "transport/transport.h"

namespace etwire::dataplane {

class LoopbackDataPlane final : public TwinDataPlane {
 public:
  // Throws std::invalid_argument when a port is not a loopback port, the fabric cannot be
  // modelled (the twin's message) or `workers` is 0. `config` and `observer` must outlive the
  // data plane. `layout`: the twin's, laid out by the plan of the run from the same configuration
  // (TwinRig); nullptr: laid out here.
  LoopbackDataPlane(const config::RunConfig& config, transport::FlowObserver& observer,
                    uint32_t workers = 1, const twin::FabricLayout* layout = nullptr);
  ~LoopbackDataPlane() override;

  clock::Scheduler& scheduler() override { return rig_.clock(); }
  clock::Nanos next_event_time() const override { return rig_.clock().next_event_time(); }
  void poll() override;
  uint64_t events_run() const override { return rig_.clock().events_run(); }
  void post(transport::ConnectionId connection, uint64_t bytes,
            const transport::FlowTags& tags) override;
  bool append_qp_stats(std::vector<transport::QpStats>& out) override;
  void capture_frames(const std::string& dir) override { begin_capture(dir, rig_.clock().now()); }
  void sample_queues(QueueSink& sink, clock::Nanos interval_ns) override;

  size_t workers() const { return workers_.size(); }

 private:
  // Ports are dealt to workers in turn.
  Worker& worker_of(uint32_t port) override { return *workers_[port % workers_.size()]; }
  const Worker& worker_of(uint32_t port) const override {
    return *workers_[port % workers_.size()];
  }
  void for_each_worker(const std::function<void(Worker&)>& visit) override {
    for (auto& worker : workers_) visit(*worker);
  }
  const twin::FabricLayout& layout() const override { return rig_.twin().layout(); }
  twin::WireCounters host_counters(size_t host) const override {
    return rig_.twin().host_counters(host);
  }
  twin::WireCounters switch_port_counters(size_t switch_port) const override {
    return rig_.twin().switch_port_counters(switch_port);
  }
  std::vector<std::string> fault_report() const override { return rig_.twin().fault_report(); }

  TwinRig rig_;
  std::vector<std::unique_ptr<Worker>> workers_;
  std::unique_ptr<TwinQueueSampler> sampler_;
};

// The factory of a loopback data plane with `workers` workers, for the engine's RunOptions; on
// `layout` (which must outlive the data plane) when given.
DataPlaneFactory loopback_data_plane_factory(uint32_t workers = 1,
                                             const twin::FabricLayout* layout = nullptr);

}  // namespace etwire::dataplane

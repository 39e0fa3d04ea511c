// The data plane of a run whose ports are DPDK ports: the wall clock, one DpdkPort per
// configured port, grouped by the lcore that drives them, each group a PortWorker with its own
// transport and run-to-completion loop (see port_worker.h). The engine runs on the calling thread
// (DPDK's main lcore), with the ports that name no lcore; connections and messages go to the
// workers, and flow events come back, through lock-free rings.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "clock/wall_clock.h"
#include "common/ring_queue.h"
#include "config/run_config.h"
#include "dataplane/data_plane.h"
#include "dataplane/dpdk/port_worker.h"
#include "dataplane/flow_join.h"
#include "dataplane/frame_capture.h"
#include "nic/dpdk/dpdk_port.h"
#include "nic/dpdk/run_devices.h"
#include "nic/frame/payload_pattern.h"
#include "nic/frame/wire_directory.h"

struct rte_ring;

namespace etwire::dataplane {

// The EAL arguments a configuration needs: defaults that keep DPDK quiet, `dpdk.eal_args`, and
// a --vdev or -a for each device of emulator process `emulator`'s ports (net_ring devices
// excepted: etwire makes those itself). With several emulators, a --file-prefix of the process's
// own unless `dpdk.eal_args` has one (or --in-memory), so that processes on one machine do not
// share DPDK's runtime files.
std::vector<std::string> eal_arguments(const config::RunConfig& config, uint32_t emulator = 0);

class DpdkDataPlane final : public DataPlane {
 public:
  // Starts the EAL (once per process) and every port, each on the worker of its `dpdk.lcore`
  // (ports without one on the main lcore's); a port of several queues runs each queue on the
  // worker of its lcore in `dpdk.lcores`, and spreads its connections over them. Throws
  // std::invalid_argument when a port is not a dpdk port, std::runtime_error when DPDK cannot set a
  // device up or a port names an lcore that is not an EAL worker lcore (the port and the reason in
  // the message). In a run split between emulator processes it sets up only the ports of
  // emulator `emulator` (config::drives_port); a connection to a port of another process opens
  // only its local half, and the wire joins the two. `config` and `observer` must outlive the
  // data plane.
  DpdkDataPlane(const config::RunConfig& config, transport::FlowObserver& observer,
                uint32_t emulator = 0);
  ~DpdkDataPlane() override;

  clock::Scheduler& scheduler() override { return clock_; }
  size_t ports() const override { return config_.ports.size(); }
  bool virtual_time() const override { return false; }
  clock::Nanos next_event_time() const override { return clock_.now(); }
  void start() override;
  void finish() override;
  void poll() override;
  uint64_t events_run() const override;
  transport::ConnectionId connect(const WireConnection& connection) override;
  void post(transport::ConnectionId connection, uint64_t bytes,
            const transport::FlowTags& tags) override;
  uint32_t flows_in_progress() const override { return static_cast<uint32_t>(join_.in_progress()); }
  PortRecord port_record(size_t port) const override;
  PortCounters port_counters(size_t port) const override;
  void paced_rates_bps(std::vector<double>& per_port) override;
  // After finish() only (the workers on other lcores have stopped); false before.
  bool append_qp_stats(std::vector<transport::QpStats>& out) override;
  std::vector<std::string> notes() const override;
  // Files open now; frames are captured from start() on, on the run's clock.
  void capture_frames(const std::string& dir) override;

  // Workers: on the main lcore first if any port runs there.
  size_t workers() const { return workers_.size(); }

 private:
  // Puts the capture writer on the CPUs no lcore polls; a note when there are none.
  void place_capture_writer();
  nic::dpdk::DpdkPortSetup port_setup(size_t port, uint16_t queue, uint16_t device,
                                      uint32_t instance, rte_ring* rx_ring) const;
  // Rings between every two workers, for ports of several queues (see HandoverRing).
  void connect_handover();
  // finish(), between halting the workers and stopping them: takes in what is still on the wire.
  void settle_wire();
  void send(size_t worker, const WorkerCommand& command);
  // Hands a worker the commands its ring had no room for, as far as it now has.
  void send_waiting(size_t worker);
  void wait_until_open(uint32_t connection);
  void handle(const WorkerReport& report);

  const config::RunConfig& config_;
  std::vector<bool> here_;  // by port: driven by this process
  // The workers report each message's halves; the join makes them the engine's flow events.
  FlowJoin join_;
  clock::WallClock clock_;
  frame::PayloadPattern payload_;
  nic::WireDirectory directory_;           // checks every connection before the workers see it
  std::unique_ptr<FrameCapture> capture_;  // with telemetry.record.pcap; outlives the ports
  std::vector<unsigned> writer_cpus_;      // the capture writer's: off the lcores if it can be
  // Before the workers: their ports are set up on these devices, and go first.
  std::unique_ptr<nic::dpdk::RunDevices> devices_;
  std::vector<std::unique_ptr<PortWorker>> workers_;
  std::vector<std::vector<uint32_t>> queue_workers_;  // [port][queue]: the worker driving it
  std::vector<uint32_t> next_queue_;            // by port: for its next connection's requester
  std::vector<uint32_t> next_responder_queue_;  // by port: for the next responder on it
  // [from * workers + to]: what a queue received for another worker's queue of the device.
  std::vector<std::unique_ptr<HandoverRing>> handover_rings_;
  PortWorker* main_worker_ = nullptr;
  std::vector<RingQueue<WorkerCommand>> unsent_;  // by worker: commands its ring had no room for
  uint32_t connections_ = 0;
  static constexpr uint32_t kNoWorker = ~0u;
  std::vector<uint32_t> worker_of_requester_;  // by requester QP number: messages are posted there
  uint64_t events_ = 0;
  bool finished_ = false;
  std::vector<std::string> notes_;
};

}  // namespace etwire::dataplane

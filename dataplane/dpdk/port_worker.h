// One lcore's share of a DPDK run: the ports (queues) configured on that lcore and a WorkerLoop
// (worker_loop.h) over them on the lcore's own wall clock, sharing the main lcore's time. What is
// DPDK's own is here: the devices' ports and how they are polled, the lcore the loop runs on,
// and the rings that carry what one queue of a device received for another queue's worker.
//
// The ports without an lcore form the main lcore's worker, which the main loop runs a step at a
// time between the engine's events (run_once); the same rings connect it, so both kinds behave
// alike.
#pragma once

#include <atomic>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/spsc_ring.h"
#include "config/run_config.h"
#include "dataplane/worker_loop.h"
#include "nic/dpdk/dpdk_port.h"
#include "nic/frame/payload_pattern.h"
#include "nic/frame/wire_directory.h"

namespace etwire::dataplane {

// Between the workers of a device's queues: what one queue received for another.
using HandoverRing = SpscRing<nic::Packet>;

class PortWorker final : public PollHook, public nic::dpdk::QueueHandover {
 public:
  // Builds the worker's ports (`setups`, each with its run-wide port index) and its loop.
  // `lcore` is the EAL worker lcore it will run on; none for the main lcore's worker. Throws as
  // DpdkPort does. `config` and `payload` must outlive the worker.
  PortWorker(const config::RunConfig& config, const frame::PayloadPattern& payload,
             const std::vector<nic::dpdk::DpdkPortSetup>& setups, std::optional<unsigned> lcore);
  ~PortWorker();
  PortWorker(const PortWorker&) = delete;
  PortWorker& operator=(const PortWorker&) = delete;

  // Main lcore, before launch, when some port has several queues: `queue_workers[port][queue]`
  // is the worker driving each queue, `to[w]` the ring to worker w (nullptr for itself) and
  // `from` the rings into this worker. All must outlive the worker.
  void set_handover(const std::vector<std::vector<uint32_t>>* queue_workers,
                    std::vector<HandoverRing*> to, std::vector<HandoverRing*> from);

  // Main lcore, before launch: read the same time as `reference`.
  void share_time_with(const clock::WallClock& reference) {
    loop_.clock().share_time_with(reference);
  }
  // Main lcore: starts the loop on the worker's lcore (nothing for the main lcore's worker).
  // Throws std::runtime_error when DPDK cannot launch it.
  void launch();
  // Main lcore: stops the loop and waits for it; the counters are final afterwards.
  void stop();
  // Ends the lcore's loop, as stop() does, without taking in what other workers handed over: a
  // run's end halts every worker first, so that none hands over after another stopped.
  void halt();
  // Main lcore, between halt() and stop(): one pass over the worker's ports after the run, as
  // the loop's own (queued frames handed to the devices, a burst received and delivered, what
  // other workers handed over taken in), timers left out. True when it moved a frame or left
  // one waiting: the run's end repeats passes until none does (DpdkDataPlane::finish).
  bool settle_pass();

  // Main lcore's worker: one pass of the loop.
  void run_once() { loop_.run_once(); }

  // Main lcore: hands a command over; false when the ring is full (send it again later).
  bool send(const WorkerCommand& command) { return loop_.send(command); }
  // Main lcore: every report so far, oldest first.
  template <typename Consume>
  size_t drain_reports(Consume&& consume) {
    return loop_.drain_reports(std::forward<Consume>(consume));
  }
  // Main lcore: throws std::runtime_error with the worker's reason if its loop failed.
  void check() const;

  const std::optional<unsigned>& lcore() const { return lcore_; }
  // The latest published counters of a port this worker drives (any thread).
  PortSample sample(uint32_t port) const { return loop_.sample(port); }
  uint64_t events_run() const { return loop_.events_run(); }
  // Main lcore, after stop(): every QP half of this worker (Transport::append_qp_stats).
  void append_qp_stats(std::vector<transport::QpStats>& out, clock::Nanos now) {
    loop_.worker().append_qp_stats(out, now);
  }
  // Connections this worker has opened so far (any thread): connection n is open once this
  // exceeds n, since they open in order.
  uint32_t connections_open() const { return loop_.connections_open(); }

 private:
  static constexpr uint32_t kNotLocal = ~0u;
  static int loop_entry(void* worker);

  // PollHook.
  void on_connect(uint32_t connection, const nic::WireRoute& route) override;
  void poll_ports(clock::Nanos now, const clock::Scheduler& clock) override;
  void device_counters(uint32_t port, PortCounters& counters, uint64_t& handed_over) override;

  bool hand_over(uint16_t queue, const nic::Packet& packet) override;
  void take_handed_over(const clock::Scheduler& clock);

  const config::RunConfig& config_;
  std::optional<unsigned> lcore_;
  nic::WireDirectory directory_;
  std::vector<std::unique_ptr<nic::dpdk::DpdkPort>> ports_;
  std::vector<uint32_t> local_of_;  // run-wide port index -> index in ports_, or kNotLocal
  // After the ports: its transport refers to them, and goes first.
  WorkerLoop loop_;
  const std::vector<std::vector<uint32_t>>* queue_workers_ = nullptr;
  std::vector<HandoverRing*> handover_to_;    // by worker
  std::vector<HandoverRing*> handover_from_;  // the non-null ones
  std::atomic<bool> running_{false};
};

}  // namespace etwire::dataplane

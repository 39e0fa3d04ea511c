// One core's share of a DPDK run: the ports configured on that lcore, a Worker (worker.h) over
// them on the core's own wall clock (sharing the main lcore's time), and a run-to-completion loop
// that runs the transport's due events (pacing), hands frames to the devices in bursts and polls
// them for arrivals, which feed the transport. What is DPDK's own here is the devices, the
// lcore, and the rings between cores.
//
// The worker shares nothing mutable with other cores but three single-producer single-consumer
// rings: connections and messages in from the main lcore (where the engine runs), flow events
// out to it, and a published copy of its ports' counters. Its worker opens only the halves of
// connections its queues drive, numbered by the address plan's QP numbers; a message is posted
// only to the worker that drives its requester.
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

#include "clock/wall_clock.h"
#include "common/ring_queue.h"
#include "common/spsc_ring.h"
#include "config/run_config.h"
#include "dataplane/dpdk/port_sample.h"
#include "dataplane/worker.h"
#include "nic/dpdk/dpdk_port.h"
#include "nic/dpdk/wire_directory.h"
#include "nic/frame/payload_pattern.h"
#include "transport/transport.h"

namespace etwire::dataplane {

struct WorkerCommand {
  enum class Kind : uint8_t { kConnect, kPost };
  Kind kind = Kind::kPost;
  // kConnect: the connection (numbered 0, 1, ... by the main lcore) and where its frames go.
  uint32_t connection = 0;
  uint16_t udp_source_port = 0;
  nic::dpdk::WireRoute route;
  // kPost: the message and the QP number of the requester it goes on.
  uint32_t requester_qpn = 0;
  uint64_t bytes = 0;
  transport::FlowTags tags;
};

struct WorkerReport {
  enum class Kind : uint8_t { kDelivered, kFinished, kRemoteDelivery };
  Kind kind = Kind::kFinished;
  transport::FlowRecord record;  // kDelivered, kFinished
  // kRemoteDelivery: the next message from the requester `requester_qpn`, which another worker
  // drives, arrived at `at` with `ecn_marks` CE marks.
  uint32_t requester_qpn = 0;
  clock::Nanos at = 0;
  uint32_t ecn_marks = 0;
};

// Between the workers of a device's queues: what one queue received for another.
using HandoverRing = SpscRing<nic::Packet>;

class PortWorker final : public transport::FlowObserver, public nic::dpdk::QueueHandover {
 public:
  // Builds the worker's ports (`setups`, each with its run-wide port index) and its transport.
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
  void share_time_with(const clock::WallClock& reference) { clock_.share_time_with(reference); }
  // Main lcore: starts the loop on the worker's lcore (nothing for the main lcore's worker).
  // Throws std::runtime_error when DPDK cannot launch it.
  void launch();
  // Main lcore: stops the loop and waits for it; the counters are final afterwards.
  void stop();

  // Main lcore's worker: one pass of the loop.
  void run_once();

  // Main lcore: hands a command over; false when the ring is full (send it again later).
  bool send(const WorkerCommand& command) { return commands_.try_push(command); }
  // Main lcore: every report so far, oldest first.
  template <typename Consume>
  size_t drain_reports(Consume&& consume) {
    return reports_.drain(std::forward<Consume>(consume));
  }
  // Main lcore: throws std::runtime_error with the worker's reason if its loop failed.
  void check() const;

  const std::optional<unsigned>& lcore() const { return lcore_; }
  bool drives(uint32_t port) const { return local_of_[port] != kNotLocal; }
  // The latest published counters of a port this worker drives (any thread).
  PortSample sample(uint32_t port) const { return published_[local_of_[port]].read(); }
  uint64_t events_run() const { return events_.load(std::memory_order_relaxed); }
  // Connections this worker has opened so far (any thread): connection n is open once this
  // exceeds n, since they open in order.
  uint32_t connections_open() const { return connections_open_.load(std::memory_order_acquire); }

 private:
  static constexpr uint32_t kNotLocal = ~0u;
  static int loop_entry(void* worker);
  void loop();
  void execute(const WorkerCommand& command);
  void publish();
  void report(const WorkerReport& report);

  bool hand_over(uint16_t queue, const nic::Packet& packet) override;
  void take_handed_over(clock::Nanos now);

  void on_flow_delivered(const transport::FlowRecord& record) override;
  void on_flow_finished(const transport::FlowRecord& record) override;
  void on_delivered_to_responder(uint32_t requester_qpn, clock::Nanos now,
                                 uint32_t ecn_marks) override;

  const config::RunConfig& config_;
  std::optional<unsigned> lcore_;
  clock::WallClock clock_;
  nic::dpdk::WireDirectory directory_;
  std::vector<std::unique_ptr<nic::dpdk::DpdkPort>> ports_;
  std::vector<uint32_t> local_of_;  // run-wide port index -> index in ports_, or kNotLocal
  std::unique_ptr<Worker> worker_;
  const std::vector<std::vector<uint32_t>>* queue_workers_ = nullptr;
  std::vector<HandoverRing*> handover_to_;    // by worker
  std::vector<HandoverRing*> handover_from_;  // the non-null ones
  SpscRing<WorkerCommand> commands_;
  SpscRing<WorkerReport> reports_;
  RingQueue<WorkerReport> unsent_;  // reports the ring had no room for, oldest first
  std::unique_ptr<PublishedPortSample[]> published_;
  std::vector<double> paced_rates_;
  std::atomic<uint64_t> events_{0};
  std::atomic<uint32_t> connections_open_{0};
  uint64_t passes_ = 0;
  std::atomic<bool> stop_{false};
  std::atomic<bool> running_{false};
  std::atomic<bool> failed_{false};
  std::string failure_;  // written before failed_ is set
};

}  // namespace etwire::dataplane

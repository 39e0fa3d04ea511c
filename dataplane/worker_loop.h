// A Worker on a thread of its own, on the wall clock: the run-to-completion loop of a packet
// backend, with DPDK's l2fwd as the model. Each pass takes the commands the main thread sent
// (open a connection, post a message), runs the clock's due events (the transport's pacers and
// line-rate timers decide when packets start), then polls the backend's ports (hand queued
// frames to the device, take a burst of arrivals), and hands flow reports back.
//
// The loop shares nothing mutable with other threads but single-producer single-consumer rings
// (commands in, reports out; what a full ring cannot take waits, in order, on the side that
// produced it) and a published copy of its ports' counters (a seqlock per port). The backend
// contributes only its ports (added to worker()), the clock's time base, and the poll hook
// below; it starts loop() on a thread of its choice, or steps run_once() from the main thread.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "clock/wall_clock.h"
#include "common/ring_queue.h"
#include "common/spsc_ring.h"
#include "config/transport_config.h"
#include "dataplane/port_sample.h"
#include "dataplane/worker.h"
#include "nic/frame/wire_route.h"
#include "transport/flow_record.h"

namespace etwire::dataplane {

struct WorkerCommand {
  enum class Kind : uint8_t { kConnect, kPost };
  Kind kind = Kind::kPost;
  // kConnect: the connection (numbered 0, 1, ... by the main thread) and where its frames go.
  uint32_t connection = 0;
  uint16_t udp_source_port = 0;
  nic::WireRoute route;
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
  // drives, arrived at `at` with `ecn_marks` CE marks and its last packet's `immediate`.
  uint32_t requester_qpn = 0;
  clock::Nanos at = 0;
  uint32_t ecn_marks = 0;
  uint32_t immediate = 0;
};

// What a backend hands the loop besides its ports.
class PollHook {
 public:
  // A connection opened: every worker hears of every one (a frame of it may arrive anywhere).
  virtual void on_connect(uint32_t connection, const nic::WireRoute& route) = 0;
  // One look at every port: queued frames to the device, one burst of arrivals each. `now` is
  // the pass's time; arrivals are stamped with `clock` once a burst brought any.
  virtual void poll_ports(clock::Nanos now, const clock::Scheduler& clock) = 0;
  // The device side of run port `port`'s counters (frames, bytes, pauses, drops), and frames it
  // took for another queue of the port.
  virtual void device_counters(uint32_t port, PortCounters& counters, uint64_t& handed_over) = 0;

 protected:
  ~PollHook() = default;
};

class WorkerLoop final : public transport::FlowObserver {
 public:
  // `config` and `hook` must outlive the loop. The clock takes its time base from
  // share_time_with(); it does no calibration of its own.
  WorkerLoop(const config::TransportConfig& config, PollHook& hook);

  Worker& worker() { return worker_; }
  clock::WallClock& clock() { return clock_; }
  // Before the loop starts, once every port is added: the ports whose counters it publishes.
  void publish_ports(std::vector<uint32_t> ports);

  // The loop's thread: passes until request_stop(); an exception ends it, and check() rethrows
  // its message on the main thread.
  void loop();
  // One pass (the main thread's own worker, stepped between the engine's events).
  void run_once();
  // Main thread: asks loop() to return after its pass.
  void request_stop() { stop_.store(true, std::memory_order_release); }
  void clear_stop() { stop_.store(false, std::memory_order_relaxed); }
  // Throws std::runtime_error with `who` and the loop's reason if it failed.
  void check(const std::string& who) const;

  // Main thread: hands a command over; false when the ring is full (send it again later).
  bool send(const WorkerCommand& command) { return commands_.try_push(command); }
  // Main thread: every report so far, oldest first.
  template <typename Consume>
  size_t drain_reports(Consume&& consume) {
    return reports_.drain(std::forward<Consume>(consume));
  }
  // Copies the counters out for the main thread (every millisecond or so, and when the loop has
  // stopped: then they are final).
  void publish();
  // The latest published counters of run port `port` (any thread).
  PortSample sample(uint32_t port) const { return published_[slot_[port]].read(); }
  uint64_t events_run() const { return events_.load(std::memory_order_relaxed); }
  // Connections this worker has heard of so far (any thread): connection n is open once this
  // exceeds n, since they arrive in order.
  uint32_t connections_open() const { return connections_open_.load(std::memory_order_acquire); }

 private:
  void execute(const WorkerCommand& command);
  void report(const WorkerReport& report);
  void on_flow_delivered(const transport::FlowRecord& record) override;
  void on_flow_finished(const transport::FlowRecord& record) override;
  void on_delivered_to_responder(uint32_t requester_qpn, clock::Nanos now, uint32_t ecn_marks,
                                 uint32_t immediate) override;

  PollHook& hook_;
  clock::WallClock clock_;
  Worker worker_;
  SpscRing<WorkerCommand> commands_;
  SpscRing<WorkerReport> reports_;
  RingQueue<WorkerReport> unsent_;  // reports the ring had no room for, oldest first
  std::vector<uint32_t> ports_;     // run ports whose counters are published
  std::vector<uint32_t> slot_;      // by run port: index into published_
  std::unique_ptr<PublishedPortSample[]> published_;
  std::vector<double> paced_rates_;
  std::atomic<uint64_t> events_{0};
  std::atomic<uint32_t> connections_open_{0};
  uint64_t passes_ = 0;
  std::atomic<bool> stop_{false};
  std::atomic<bool> failed_{false};
  std::string failure_;  // written before failed_ is set
};

}  // namespace etwire::dataplane

#include "dataplane/dpdk/port_worker.h"

#include <fmt/format.h>
#include <rte_launch.h>

#include <exception>
#include <stdexcept>
#include <utility>

#include "nic/port_frame_format.h"

namespace etwire::dataplane {

namespace {

// Commands arrive in bursts when a collective starts (a message per peer and chunk); the main
// lcore keeps what does not fit and sends it on its next pass.
constexpr size_t kCommandRing = 4096;
// Two reports per message at most; the main lcore drains them on every pass.
constexpr size_t kReportRing = 16384;
// Counters are published every this many passes of the loop (about a millisecond).
constexpr uint64_t kPassesPerPublish = 1024;

}  // namespace

PortWorker::PortWorker(const config::RunConfig& config, const frame::PayloadPattern& payload,
                       const std::vector<nic::dpdk::DpdkPortSetup>& setups,
                       std::optional<unsigned> lcore)
    : config_(config),
      lcore_(lcore),
      clock_(0),  // no calibration of its own: share_time_with() gives it the main lcore's
      local_of_(config.ports.size(), kNotLocal),
      commands_(kCommandRing),
      reports_(kReportRing) {
  for (const nic::dpdk::DpdkPortSetup& setup : setups) {
    local_of_[setup.index] = static_cast<uint32_t>(ports_.size());
    ports_.push_back(std::make_unique<nic::dpdk::DpdkPort>(setup, payload, directory_));
  }
  published_ = std::make_unique<PublishedPortSample[]>(ports_.size());
  // The worker's transport holds this lcore's ports (queues) only.
  worker_ = std::make_unique<Worker>(config.transport, clock_, *this);
  for (size_t i = 0; i < setups.size(); ++i) {
    const config::PortConfig& port = config.ports[setups[i].index];
    nic::dpdk::DpdkPort& driven = *ports_[i];
    worker_->add_port(driven, setups[i].index, setups[i].queue, port.qos,
                      nic::frame_format(config, port), driven.catch_up());
  }
}

PortWorker::~PortWorker() {
  stop();
  worker_.reset();
  for (auto& port : ports_) port->stop();
}

void PortWorker::launch() {
  if (!lcore_) return;
  stop_.store(false, std::memory_order_relaxed);
  const int rc = rte_eal_remote_launch(&PortWorker::loop_entry, this, *lcore_);
  if (rc != 0) {
    throw std::runtime_error(
        fmt::format("lcore {}: cannot start the port worker on it (DPDK error {})", *lcore_, rc));
  }
  running_.store(true, std::memory_order_relaxed);
}

void PortWorker::stop() {
  if (running_.load(std::memory_order_relaxed)) {
    stop_.store(true, std::memory_order_release);
    rte_eal_wait_lcore(*lcore_);
    running_.store(false, std::memory_order_relaxed);
  }
  publish();
}

int PortWorker::loop_entry(void* worker) {
  static_cast<PortWorker*>(worker)->loop();
  return 0;
}

void PortWorker::loop() {
  try {
    while (!stop_.load(std::memory_order_acquire)) run_once();
  } catch (const std::exception& e) {
    failure_ = e.what();
    failed_.store(true, std::memory_order_release);
  }
}

void PortWorker::check() const {
  if (failed_.load(std::memory_order_acquire)) {
    throw std::runtime_error(
        fmt::format("port worker on lcore {}: {}", lcore_ ? *lcore_ : 0u, failure_));
  }
}

void PortWorker::run_once() {
  commands_.drain([this](const WorkerCommand& command) { execute(command); });
  events_.store(events_.load(std::memory_order_relaxed) + clock_.poll(), std::memory_order_relaxed);
  const clock::Nanos now = clock_.last_read();
  for (auto& port : ports_) port->poll(now, &clock_);
  if (!handover_from_.empty()) take_handed_over(now);
  while (!unsent_.empty() && reports_.try_push(unsent_.front())) unsent_.pop_front();
  if (++passes_ % kPassesPerPublish == 0) publish();
}

void PortWorker::set_handover(const std::vector<std::vector<uint32_t>>* queue_workers,
                              std::vector<HandoverRing*> to, std::vector<HandoverRing*> from) {
  queue_workers_ = queue_workers;
  handover_to_ = std::move(to);
  handover_from_.clear();
  for (HandoverRing* ring : from) {
    if (ring != nullptr) handover_from_.push_back(ring);
  }
  for (auto& port : ports_) port->set_queue_handover(this);
}

bool PortWorker::hand_over(uint16_t queue, const nic::Packet& packet) {
  HandoverRing* ring = handover_to_[(*queue_workers_)[packet.dst_port][queue]];
  return ring != nullptr && ring->try_push(packet);
}

void PortWorker::take_handed_over(clock::Nanos now) {
  for (HandoverRing* ring : handover_from_) {
    bool stamped = false;
    ring->drain([&](const nic::Packet& packet) {
      // Stamped when taken, as a burst is (DpdkPort::poll): the round's time may be behind.
      if (!stamped) {
        now = clock_.now();
        stamped = true;
      }
      ports_[local_of_[packet.dst_port]]->receive_handed_over(packet, now);
    });
  }
}

void PortWorker::execute(const WorkerCommand& command) {
  if (command.kind == WorkerCommand::Kind::kConnect) {
    // Every worker learns every route (a frame for a connection may arrive on any queue of a
    // port), and opens the halves it drives.
    const nic::dpdk::WireRoute& route = command.route;
    directory_.add(command.connection, route);
    worker_->open({route.requester.port, route.requester.queue, route.requester.qpn},
                  {route.responder.port, route.responder.queue, route.responder.qpn},
                  command.udp_source_port);
    connections_open_.store(command.connection + 1, std::memory_order_release);
    return;
  }
  worker_->post(command.requester_qpn, command.bytes, command.tags);
}

void PortWorker::publish() {
  paced_rates_.assign(config_.ports.size(), 0.0);
  worker_->add_paced_rates(paced_rates_);
  for (size_t p = 0; p < config_.ports.size(); ++p) {
    if (local_of_[p] == kNotLocal) continue;
    const nic::dpdk::DpdkPort& port = *ports_[local_of_[p]];
    const nic::dpdk::DpdkPortCounters& nic = port.counters();
    const frame::FrameErrorCounters& errors = port.frame_errors();
    const transport::TransportPortCounters& transport = worker_->counters(static_cast<uint32_t>(p));
    PortSample sample;
    sample.counters.tx_bytes = nic.tx_bytes;
    sample.counters.rx_bytes = nic.rx_bytes;
    sample.counters.tx_packets = nic.tx_frames;
    sample.counters.rx_packets = nic.rx_frames;
    sample.counters.data_packets = transport.data_packets;
    sample.counters.retransmitted_packets = transport.retransmitted_packets;
    sample.counters.missing_packets = transport.missing_packets;
    sample.counters.ecn_marked_received = transport.ecn_marked_received;
    sample.counters.cnps_sent = transport.cnps_sent;
    sample.counters.cnps_received = transport.cnps_received;
    sample.counters.pfc_pauses_sent = nic.pauses_sent;
    sample.counters.pfc_pauses_received = nic.pauses_received;
    // Frames this port lost: not sent (no mbuf, queue full), arrived broken or for no QP, or
    // lost inside the device.
    // (The device's own count once per device, with its first queue.)
    sample.counters.drops = nic.tx_dropped + nic.tx_unrouted + nic.rx_unknown_qp +
                            nic.rx_handover_lost + errors.truncated + errors.bad_header +
                            errors.bad_icrc + errors.unknown_opcode +
                            (port.queue() == 0 ? port.device_drops() : 0);
    sample.rx_handed_over = nic.rx_handed_over;
    sample.counters.timeouts = transport.timeouts;
    sample.paced_rate_bps = static_cast<uint64_t>(paced_rates_[p]);
    published_[local_of_[p]].publish(sample);
  }
}

void PortWorker::report(const WorkerReport& report) {
  // Order matters (a message's delivery before its completion): once one report waits, all do.
  if (!unsent_.empty() || !reports_.try_push(report)) unsent_.push_back(report);
}

void PortWorker::on_flow_delivered(const transport::FlowRecord& record) {
  WorkerReport delivered;
  delivered.kind = WorkerReport::Kind::kDelivered;
  delivered.record = record;
  report(delivered);
}

void PortWorker::on_flow_finished(const transport::FlowRecord& record) {
  WorkerReport finished;
  finished.kind = WorkerReport::Kind::kFinished;
  finished.record = record;
  report(finished);
}

void PortWorker::on_delivered_to_responder(uint32_t requester_qpn, clock::Nanos now,
                                           uint32_t ecn_marks) {
  WorkerReport delivered;
  delivered.kind = WorkerReport::Kind::kRemoteDelivery;
  delivered.requester_qpn = requester_qpn;
  delivered.at = now;
  delivered.ecn_marks = ecn_marks;
  report(delivered);
}

}  // namespace etwire::dataplane

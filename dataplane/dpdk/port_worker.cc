#include "dataplane/dpdk/port_worker.h"

#include <fmt/format.h>
#include <rte_launch.h>

#include <stdexcept>
#include <utility>

#include "nic/port_frame_format.h"

namespace etwire::dataplane {

PortWorker::PortWorker(const config::RunConfig& config, const frame::PayloadPattern& payload,
                       const std::vector<nic::dpdk::DpdkPortSetup>& setups,
                       std::optional<unsigned> lcore)
    : config_(config),
      lcore_(lcore),
      local_of_(config.ports.size(), kNotLocal),
      loop_(config.transport, *this) {
  std::vector<uint32_t> run_ports;
  for (const nic::dpdk::DpdkPortSetup& setup : setups) {
    local_of_[setup.index] = static_cast<uint32_t>(ports_.size());
    ports_.push_back(std::make_unique<nic::dpdk::DpdkPort>(setup, payload, directory_));
    nic::dpdk::DpdkPort& driven = *ports_.back();
    const config::PortConfig& port = config.ports[setup.index];
    loop_.worker().add_port(driven, setup.index, setup.queue, port.qos,
                            nic::frame_format(config, port), driven.catch_up());
    run_ports.push_back(setup.index);
  }
  loop_.publish_ports(std::move(run_ports));
}

PortWorker::~PortWorker() {
  stop();
  for (auto& port : ports_) port->stop();
}

void PortWorker::launch() {
  if (!lcore_) return;
  loop_.clear_stop();
  const int rc = rte_eal_remote_launch(&PortWorker::loop_entry, this, *lcore_);
  if (rc != 0) {
    throw std::runtime_error(
        fmt::format("lcore {}: cannot start the port worker on it (DPDK error {})", *lcore_, rc));
  }
  running_.store(true, std::memory_order_relaxed);
}

void PortWorker::halt() {
  if (running_.load(std::memory_order_relaxed)) {
    loop_.request_stop();
    rte_eal_wait_lcore(*lcore_);
    running_.store(false, std::memory_order_relaxed);
  }
}

bool PortWorker::settle_pass() {
  const clock::WallClock& clock = loop_.clock();
  bool moved = false;
  for (auto& port : ports_) {
    const uint32_t waiting = port->frames_waiting();
    if (port->poll(clock.now(), &clock) > 0 || port->frames_waiting() != waiting) moved = true;
  }
  if (!handover_from_.empty()) take_handed_over(clock);
  // What the frames taken in answered (an ACK to a resend) goes out on the next pass.
  for (auto& port : ports_) moved |= port->frames_waiting() > 0;
  return moved;
}

void PortWorker::stop() {
  halt();
  // Frames another worker received for this one's connections and handed over in its last
  // passes (a CNP after the ACK that finished the run): counted, not left in the ring.
  if (!handover_from_.empty()) take_handed_over(loop_.clock());
  loop_.publish();
}

int PortWorker::loop_entry(void* worker) {
  static_cast<PortWorker*>(worker)->loop_.loop();
  return 0;
}

void PortWorker::check() const {
  loop_.check(fmt::format("port worker on lcore {}", lcore_ ? *lcore_ : 0u));
}

void PortWorker::on_connect(uint32_t connection, const nic::WireRoute& route) {
  directory_.add(connection, route);
}

void PortWorker::poll_ports(clock::Nanos now, const clock::Scheduler& clock) {
  for (auto& port : ports_) port->poll(now, &clock);
  if (!handover_from_.empty()) take_handed_over(clock);
}

void PortWorker::device_counters(uint32_t run_port, PortCounters& counters, uint64_t& handed_over) {
  const nic::dpdk::DpdkPort& port = *ports_[local_of_[run_port]];
  const nic::dpdk::DpdkPortCounters& nic = port.counters();
  const frame::FrameErrorCounters& errors = port.frame_errors();
  counters.tx_bytes = nic.tx_bytes;
  counters.rx_bytes = nic.rx_bytes;
  counters.tx_packets = nic.tx_frames;
  counters.rx_packets = nic.rx_frames;
  counters.pfc_pauses_sent = nic.pauses_sent;
  counters.pfc_pauses_received = nic.pauses_received;
  // Frames this port lost: not sent (no mbuf, queue full), arrived broken or for no QP, or
  // lost inside the device (the device's own count once per device, with its first queue).
  counters.drops_buffer =
      nic.tx_dropped + nic.rx_handover_lost + (port.queue() == 0 ? port.device_drops() : 0);
  counters.drops_bad_icrc = errors.bad_icrc;
  counters.drops_other = nic.tx_unrouted + nic.rx_unknown_qp + errors.truncated +
                         errors.bad_header + errors.unknown_opcode;
  counters.drops = counters.drops_buffer + counters.drops_bad_icrc + counters.drops_other;
  handed_over = nic.rx_handed_over;
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

void PortWorker::take_handed_over(const clock::Scheduler& clock) {
  for (HandoverRing* ring : handover_from_) {
    bool stamped = false;
    clock::Nanos now = 0;
    ring->drain([&](const nic::Packet& packet) {
      // Stamped when taken, as a burst is (DpdkPort::poll): the pass's time may be behind.
      if (!stamped) {
        now = clock.now();
        stamped = true;
      }
      ports_[local_of_[packet.dst_port]]->receive_handed_over(packet, now);
    });
  }
}

}  // namespace etwire::dataplane

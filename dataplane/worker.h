// One worker of a data plane: a transport over the ports a backend hands it, on the backend's
// clock, reporting to the observer the backend gives it. Every backend's workers are this; what a
// backend adds is only its ports, its clock, and how they are polled (the fabric twin needs no
// polling, a DPDK worker's loop polls its devices), and where reports go (the flow join on the
// same thread, or a ring to it).
//
// A worker opens only the halves of a connection it drives: the requester when it drives the
// sending port's queue, the responder when it drives the receiving port's. Every worker may be
// told of every connection; the others ignore it.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "clock/scheduler.h"
#include "config/qos_config.h"
#include "config/transport_config.h"
#include "nic/frame_size.h"
#include "nic/port.h"
#include "transport/transport.h"

namespace etwire::dataplane {

// One half of a connection as workers place it: the port (index in the run), which of the
// port's queues drives it (0 for a port of one), and its QP number.
struct HalfPlace {
  uint32_t port = 0;
  uint16_t queue = 0;
  uint32_t qpn = 0;
};

class Worker {
 public:
  // `config`, `clock` and `observer` must outlive the worker.
  Worker(const config::TransportConfig& config, clock::Scheduler& clock,
         transport::FlowObserver& observer);
  Worker(const Worker&) = delete;
  Worker& operator=(const Worker&) = delete;

  // Adds a port this worker drives: run port `port`, its queue `queue`. `catch_up` as
  // Transport::set_catch_up (0 on the virtual clock). The port must outlive the worker.
  void add_port(nic::Port& device, uint32_t port, uint16_t queue, const config::PortQos& qos,
                const nic::FrameFormat& format, clock::Nanos catch_up = 0);

  // Opens the halves of the connection from `requester` to `responder` that this worker drives
  // (none, one or both). Throws std::invalid_argument for a QP number taken here.
  void open(const HalfPlace& requester, const HalfPlace& responder, uint16_t udp_source_port);
  // Opens one half of that connection, which this worker must drive: the responder, or the
  // requester. For a backend that opens each half on its own (the software RNIC, as a QP reaches
  // RTR and then RTS). Throws std::invalid_argument for a half on a port or queue not driven
  // here, or a QP number taken here.
  void open_responder(const HalfPlace& requester, const HalfPlace& responder,
                      uint16_t udp_source_port);
  void open_requester(const HalfPlace& requester, const HalfPlace& responder,
                      uint16_t udp_source_port);
  // Queues a message on the requester `requester_qpn`, which this worker must hold.
  void post(uint32_t requester_qpn, uint64_t bytes, const transport::FlowTags& tags) {
    transport_->post(requester_qpn, bytes, tags);
  }

  bool drives(uint32_t port) const { return port < local_.size() && local_[port] != kNone; }
  // The transport's counters of run port `port`, which this worker drives.
  const transport::TransportPortCounters& counters(uint32_t port) const {
    return transport_->port_counters(local_[port]);
  }
  // Adds the paced rates of this worker's ports to `per_port` (indexed by run port).
  void add_paced_rates(std::vector<double>& per_port);

  transport::Transport& transport() { return *transport_; }
  // Every QP half this worker holds (Transport::append_qp_stats).
  void append_qp_stats(std::vector<transport::QpStats>& out, clock::Nanos now) {
    transport_->append_qp_stats(out, now);
  }

 private:
  static constexpr uint32_t kNone = ~0u;
  // The transport's index of run port `port` when this worker drives it on `queue`, else kNone.
  uint32_t local(uint32_t port, uint16_t queue) const {
    return drives(port) && queues_[port] == queue ? local_[port] : kNone;
  }
  uint32_t local(const HalfPlace& half) const { return local(half.port, half.queue); }
  // local(half), which must not be kNone.
  uint32_t driven(const HalfPlace& half) const;

  std::unique_ptr<transport::Transport> transport_;
  std::vector<uint32_t> local_;     // by run port: index in the transport, or kNone
  std::vector<uint16_t> queues_;    // by run port: the queue this worker drives
  std::vector<uint32_t> run_port_;  // by transport index: the run port
  std::vector<double> rates_;
};

}  // namespace etwire::dataplane

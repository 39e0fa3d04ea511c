#include "transport/transport.h"

#include <algorithm>
#include <stdexcept>
#include <string>

#include "transport/event_tag.h"
#include "transport/segmentation.h"

namespace etwire::transport {

std::string_view qp_role_name(QpRole role) {
  return role == QpRole::kRequester ? "requester" : "responder";
}

std::string_view flow_status_name(FlowStatus status) {
  switch (status) {
    case FlowStatus::kCompleted:
      return "completed";
    case FlowStatus::kRetryExceeded:
      return "retry-exceeded";
    case FlowStatus::kFlushed:
      return "flushed";
    case FlowStatus::kRnrRetryExceeded:
      return "rnr-retry-exceeded";
    case FlowStatus::kRemoteAccessError:
      return "remote-access-error";
    case FlowStatus::kRemoteInvalidRequest:
      return "remote-invalid-request";
    case FlowStatus::kRemoteOperationError:
      return "remote-operation-error";
    case FlowStatus::kLocalLengthError:
      return "local-length-error";
    case FlowStatus::kLocalProtectionError:
      return "local-protection-error";
    case FlowStatus::kLocalQpOperationError:
      return "local-qp-operation-error";
    case FlowStatus::kDeviceError:
      return "device-error";
  }
  return "unknown";
}

// Hands a port's arriving packets to the transport with the port's index.
class Transport::PortReceiver final : public nic::PacketReceiver {
 public:
  PortReceiver(Transport& transport, uint32_t port) : transport_(transport), port_(port) {}
  void receive(const nic::Packet& packet, clock::Nanos now) override {
    transport_.receive(port_, packet, now);
  }

 private:
  Transport& transport_;
  uint32_t port_;
};

Transport::Transport(const config::TransportConfig& config, clock::Scheduler& scheduler,
                     FlowObserver& observer)
    : config_(config),
      scheduler_(scheduler),
      observer_(observer),
      any_out_of_order_(config.any_out_of_order()) {
  if (config_.pmtu == 0) throw std::invalid_argument("transport: pmtu must be positive");
}

Transport::~Transport() {
  for (TransportPort& port : ports_) {
    if (port.nic != nullptr) port.nic->set_receiver(nullptr);
  }
}

uint32_t Transport::add_port(nic::Port& port, const config::PortQos& qos,
                             const nic::FrameFormat& format) {
  return add_port(port, qos, format, static_cast<uint32_t>(ports_.size()));
}

uint32_t Transport::add_port(nic::Port& port, const config::PortQos& qos,
                             const nic::FrameFormat& format, uint32_t id) {
  const auto index = static_cast<uint32_t>(ports_.size());
  TransportPort& added = ports_.emplace_back();
  added.nic = &port;
  added.id = id;
  added.qos = qos;
  added.format = format;
  added.speed_bps = port.speed_bps();
  added.receiver = config_.receiver_of(id);
  added.wire = clock::LineRateTimer(added.speed_bps);
  receivers_.push_back(std::make_unique<PortReceiver>(*this, index));
  port.set_receiver(receivers_.back().get());
  return index;
}

void Transport::claim_qpn(uint32_t port, std::vector<uint32_t>& by_qpn, uint32_t qpn,
                          const char* role) {
  if (port >= ports_.size()) {
    throw std::invalid_argument("transport: a " + std::string(role) + " on port " +
                                std::to_string(port) + ", which was not added (" +
                                std::to_string(ports_.size()) + " ports)");
  }
  if (qpn > nic::kPsnMask) {
    throw std::invalid_argument("transport: QP number " + std::to_string(qpn) +
                                " does not fit in 24 bits");
  }
  if (qpn >= by_qpn.size()) by_qpn.resize(qpn + 1, kNoQp);
  if (by_qpn[qpn] != kNoQp) {
    throw std::invalid_argument("transport: QP number " + std::to_string(qpn) + " is already a " +
                                role + " here");
  }
}

void Transport::open_requester(uint32_t port, uint32_t qpn, uint32_t remote_port,
                               uint32_t remote_qpn, uint16_t udp_source_port) {
  claim_qpn(port, requester_by_qpn_, qpn, "requester");
  const auto slot = static_cast<uint32_t>(requesters_.size());
  requester_by_qpn_[qpn] = slot;
  RequesterQp& requester = requesters_.emplace_back();
  requester.port = port;
  requester.remote_port = remote_port;
  requester.qpn = qpn;
  requester.remote_qpn = remote_qpn;
  requester.udp_source_port = udp_source_port;
  const uint64_t line_rate = ports_[port].speed_bps;
  requester.pacer = clock::LineRateTimer(line_rate);
  requester.reaction_point.reset(&config_.dcqcn, line_rate, scheduler_.now());
  requester.to_out_of_order = config_.receiver_of(remote_port) == config::Receiver::kOutOfOrder;
  if (any_out_of_order_) resends_.emplace_back();
  if (config_.entropy.mode == config::EntropyMode::kSpray) sprayed_.push_back(0);
  // Its responder may be here already.
  if (remote_qpn < responder_by_qpn_.size() && responder_by_qpn_[remote_qpn] != kNoQp) {
    ResponderQp& responder = responders_[responder_by_qpn_[remote_qpn]];
    if (responder.remote_qpn == qpn) responder.requester_or_marks = slot;
  }
}

void Transport::set_rate_limit(uint32_t requester_qpn, uint64_t rate_bps) {
  RequesterQp& requester = requesters_[requester_by_qpn_.at(requester_qpn)];
  const uint64_t rate = std::min(rate_bps, ports_[requester.port].speed_bps);
  requester.pacer = clock::LineRateTimer(rate);
  requester.reaction_point.reset(&config_.dcqcn, rate, scheduler_.now());
}

void Transport::open_responder(uint32_t port, uint32_t qpn, uint32_t remote_port,
                               uint32_t remote_qpn, uint16_t udp_source_port) {
  claim_qpn(port, responder_by_qpn_, qpn, "responder");
  responder_by_qpn_[qpn] = static_cast<uint32_t>(responders_.size());
  ResponderQp& responder = responders_.emplace_back();
  responder.port = port;
  responder.remote_port = remote_port;
  responder.qpn = qpn;
  responder.remote_qpn = remote_qpn;
  responder.udp_source_port = udp_source_port;
  if (any_out_of_order_) {
    const bool places = ports_[port].receiver == config::Receiver::kOutOfOrder;
    windows_.emplace_back(places ? config_.out_of_order.window : 0);
  }
  // Its requester may be here already.
  if (remote_qpn < requester_by_qpn_.size() && requester_by_qpn_[remote_qpn] != kNoQp &&
      requesters_[requester_by_qpn_[remote_qpn]].remote_qpn == qpn) {
    responder.requester_or_marks = requester_by_qpn_[remote_qpn];
  }
}

ConnectionId Transport::connect(uint32_t src_port, uint32_t dst_port, uint16_t udp_source_port) {
  if (src_port >= ports_.size() || dst_port >= ports_.size()) {
    throw std::invalid_argument("transport: connect(" + std::to_string(src_port) + ", " +
                                std::to_string(dst_port) + ") names a port that was not added (" +
                                std::to_string(ports_.size()) + " ports)");
  }
  const auto qpn =
      static_cast<uint32_t>(std::max(requester_by_qpn_.size(), responder_by_qpn_.size()));
  if (qpn > nic::kPsnMask) {
    throw std::length_error("transport: more QPs than 24-bit QP numbers can address");
  }
  open_responder(dst_port, qpn, ports_[src_port].id, qpn, udp_source_port);
  open_requester(src_port, qpn, ports_[dst_port].id, qpn, udp_source_port);
  return {qpn, qpn};
}

uint64_t Transport::post(uint32_t requester_qpn, uint64_t bytes, const FlowTags& tags) {
  if (requester_qpn >= requester_by_qpn_.size() || requester_by_qpn_[requester_qpn] == kNoQp) {
    throw std::invalid_argument("transport: post on requester QP " + std::to_string(requester_qpn) +
                                ", which is not open here");
  }
  const uint32_t requester = requester_by_qpn_[requester_qpn];
  RequesterQp& qp = requesters_[requester];
  const clock::Nanos now = scheduler_.now();
  const uint32_t slot = flows_.acquire();
  FlowSlot& flow = flows_[slot];
  flow.flow_id = next_flow_id_++;
  flow.tags = tags;
  flow.bytes = bytes;
  flow.posted_at = now;
  flow.packets = packets_for(bytes, config_.pmtu);
  flow.first_psn = qp.next_post_psn;
  ++totals_.flows_posted;

  const uint64_t flow_id = flow.flow_id;
  if (qp.failed) {
    // An RC QP in the error state completes new work requests at once, flushed.
    finish_flow(slot, qp, FlowStatus::kFlushed, now);
    return flow_id;
  }
  qp.next_post_psn += flow.packets;
  if (qp.head == kNoFlow) start_busy(qp, now);
  if (qp.tail == kNoFlow) {
    qp.head = slot;
  } else {
    flows_[qp.tail].next = slot;
  }
  qp.tail = slot;
  if (qp.cursor == kNoFlow) {
    qp.cursor = slot;
    qp.cursor_packet = 0;
  }
  if (qp.undelivered == kNoFlow) qp.undelivered = slot;
  make_ready(requester, now);
  return flow_id;
}

void Transport::on_event(uint64_t tag, clock::Nanos now) {
  const uint32_t index = event_tag::index(tag);
  switch (event_tag::kind(tag)) {
    case event_tag::Kind::kPortKick: {
      // The look scheduled for the earliest time is due since then (a superseded later one
      // finds a different time pending, and is owed nothing).
      clock::Nanos& pending = ports_[index].kick_pending_at;
      const clock::Nanos due = pending <= now ? pending : now;
      if (pending <= now) pending = clock::kNever;
      kick(index, now, due);
      break;
    }
    case event_tag::Kind::kPacerWake: {
      RequesterQp& qp = requesters_[index];
      if (qp.state != SendState::kWaiting) break;
      qp.state = SendState::kIdle;
      retime_pacer(qp, now);
      // Woken late on the wall clock, the QP is owed its packet since its pacer let it go.
      make_ready(index, now, std::min(now, qp.next_send_at));
      break;
    }
    case event_tag::Kind::kRetransmitTimer:
      on_retransmit_timer(index, now);
      break;
  }
}

void Transport::receive(uint32_t port, const nic::Packet& packet, clock::Nanos now) {
  TransportPortCounters& counters = ports_[port].counters;
  if (packet.kind == nic::PacketKind::kPfcPause) {
    on_pause_frame(port, packet, now);
    return;
  }
  if (packet.is_data()) {
    const uint32_t responder =
        packet.dest_qpn < responder_by_qpn_.size() ? responder_by_qpn_[packet.dest_qpn] : kNoQp;
    if (responder == kNoQp || responders_[responder].port != port) {
      ++counters.stale_packets;
      return;
    }
    on_data(responder, packet, now);
    return;
  }
  // The port counts every CNP that reached it, as the notification point's count of those it
  // sent is compared with it: one for a connection that has failed is ignored, not lost.
  if (packet.opcode == nic::opcode::kCnp) ++counters.cnps_received;
  const uint32_t requester =
      packet.dest_qpn < requester_by_qpn_.size() ? requester_by_qpn_[packet.dest_qpn] : kNoQp;
  if (requester == kNoQp || requesters_[requester].port != port || requesters_[requester].failed) {
    ++counters.stale_packets;
    return;
  }
  if (packet.opcode == nic::opcode::kCnp) {
    on_cnp(requester, now);
  } else if (packet.opcode == nic::opcode::kAcknowledge) {
    on_acknowledge(requester, packet, now);
  } else {
    ++counters.stale_packets;
  }
}

void Transport::paced_rates_bps(std::vector<double>& per_port) const {
  per_port.assign(ports_.size(), 0.0);
  for (const RequesterQp& qp : requesters_) {
    if (qp.has_packet_to_send()) per_port[qp.port] += qp.reaction_point.current_rate_bps();
  }
  for (size_t p = 0; p < ports_.size(); ++p) {
    per_port[p] = std::min(per_port[p], static_cast<double>(ports_[p].speed_bps));
  }
}

}  // namespace etwire::transport

namespace etwire::transport {

void Transport::append_qp_stats(std::vector<QpStats>& out, clock::Nanos now) {
  for (size_t slot = 0; slot < requesters_.size(); ++slot) {
    RequesterQp& qp = requesters_[slot];
    QpStats& stats = out.emplace_back();
    stats.role = QpRole::kRequester;
    stats.port = ports_[qp.port].id;
    stats.remote_port = qp.remote_port;
    stats.qpn = qp.qpn;
    stats.remote_qpn = qp.remote_qpn;
    stats.counters.messages = qp.counters.messages;
    stats.counters.bytes = qp.counters.bytes;
    stats.counters.packets = qp.highest_sent_psn + qp.counters.retransmitted_packets;
    stats.counters.retransmitted_packets = qp.counters.retransmitted_packets;
    stats.counters.naks_received = qp.counters.naks_received;
    stats.counters.timeouts = qp.counters.timeouts;
    if (!sprayed_.empty()) stats.counters.sprayed_packets = sprayed_[slot];
    stats.counters.cnps_received = qp.reaction_point.cnps_received();
    stats.rate_cuts = qp.reaction_point.rate_cuts();
    stats.min_rate_bps = qp.reaction_point.min_rate_bps();
    stats.rate_bps = static_cast<double>(qp.reaction_point.rate_bps(now));
    // A QP still busy counts up to `now` (its sums lack the current period's end).
    stats.busy_ns = qp.busy_ns;
    double integral = qp.busy_rate_integral;
    if (qp.head != kNoFlow) {
      stats.busy_ns += now;
      integral += qp.reaction_point.rate_time_integral(now);
    }
    if (stats.busy_ns > 0) stats.mean_rate_bps = integral / static_cast<double>(stats.busy_ns);
  }
  for (const ResponderQp& qp : responders_) {
    QpStats& stats = out.emplace_back();
    stats.role = QpRole::kResponder;
    stats.port = ports_[qp.port].id;
    stats.remote_port = qp.remote_port;
    stats.qpn = qp.qpn;
    stats.remote_qpn = qp.remote_qpn;
    stats.counters.messages = qp.message_sequence;
    stats.counters.bytes = qp.counters.bytes;
    stats.counters.packets = qp.counters.packets;
    stats.counters.naks_sent = qp.counters.naks_sent;
    stats.counters.ecn_marked_received = qp.counters.ecn_marked_received;
    stats.counters.cnps_sent = qp.counters.cnps_sent;
    stats.counters.reordered_packets = qp.counters.reordered_packets;
    stats.counters.trimmed_packets = qp.counters.trimmed_packets;
  }
}

}  // namespace etwire::transport

// The responder half of a connection: in-order acceptance with a NAK on a sequence error, or
// out-of-order placement with a NAK per lost PSN (transport.receiver); coalesced ACKs, delivery
// of whole messages, and the ECN notification point.
#include "nic/frame/wire_format.h"
#include "nic/frame_size.h"
#include "transport/psn.h"
#include "transport/transport.h"

namespace etwire::transport {

namespace {

bool ends_message(uint8_t op) {
  namespace code = nic::opcode;
  switch (op) {
    case code::kSendLast:
    case code::kSendLastWithImmediate:
    case code::kSendOnly:
    case code::kSendOnlyWithImmediate:
    case code::kWriteLast:
    case code::kWriteLastWithImmediate:
    case code::kWriteOnly:
    case code::kWriteOnlyWithImmediate:
      return true;
    default:
      return false;
  }
}

uint32_t immediate_of(const nic::Packet& packet) {
  return frame::has_immediate(packet.opcode) ? packet.immediate : 0;
}

}  // namespace

void Transport::complete_message(ResponderQp& qp, uint32_t immediate, clock::Nanos now) {
  ++qp.message_sequence;
  if (!qp.has_local_requester()) {
    observer_.on_delivered_to_responder(qp.remote_qpn, now, qp.ecn_marks_for_remote(), immediate);
    qp.requester_or_marks = kRemoteRequester;
    return;
  }
  RequesterQp& requester = requesters_[qp.requester_or_marks];
  if (!requester.failed) deliver_flow(requester, now);
}

void Transport::place_out_of_order(uint32_t responder, const nic::Packet& packet, uint64_t psn,
                                   bool ack_requested, clock::Nanos now) {
  ResponderQp& qp = responders_[responder];
  ReorderWindow& window = windows_[responder];
  const bool ahead = psn > qp.expected_psn;
  if (psn < qp.expected_psn ||
      (ahead && window.reaches(psn, qp.expected_psn) && window.placed(psn))) {
    // A duplicate: a resend of what had arrived after all. Tell the requester how far we are.
    if (ack_requested) queue_acknowledge(qp, nic::aeth::kAck, qp.expected_psn - 1);
    return;
  }
  if (packet.trimmed) {
    // Its payload was cut away on the way: lost, and known to be, so reported now rather than
    // once later PSNs run loss_after past it.
    if (window.reaches(psn, qp.expected_psn)) {
      ++ports_[qp.port].counters.missing_packets;
      queue_acknowledge(qp, nic::aeth::kNakSequenceError, psn);
      window.mark_reported(psn);
    }
    // No loss_after rule from here: the headers overtook the data queued ahead of them at the
    // switch that cut them, so a trimmed PSN says nothing of the PSNs before it.
    return;
  }
  if (ahead) {
    count_reordered(qp);
    // Ahead of a gap: placed by its PSN, if the window reaches it (else it is as good as lost,
    // and reported so once later PSNs run far enough past it).
    if (window.reaches(psn, qp.expected_psn)) {
      window.place(psn);
      qp.counters.bytes += packet.payload_bytes;
      if (ends_message(packet.opcode)) window.ends().push_back({psn, immediate_of(packet)});
    }
    report_losses(qp, window, psn);
    // Nothing is acknowledged before the first PSN has come.
    if (ack_requested && qp.expected_psn > 0) {
      queue_acknowledge(qp, nic::aeth::kAck, qp.expected_psn - 1);
    }
    return;
  }
  // The expected PSN: it and every placed PSN right after it are now in order, and the messages
  // they end complete in order.
  qp.counters.bytes += packet.payload_bytes;
  if (ends_message(packet.opcode)) complete_message(qp, immediate_of(packet), now);
  window.forget_report(psn);  // made when its headers came trimmed
  uint64_t next = psn + 1;
  while (window.take(next)) ++next;
  qp.expected_psn = next;
  std::vector<ReorderWindow::MessageEnd>& ends = window.ends();
  while (!ends.empty()) {
    auto first = std::min_element(ends.begin(), ends.end(),
                                  [](const auto& a, const auto& b) { return a.psn < b.psn; });
    if (first->psn >= next) break;
    const uint32_t immediate = first->immediate;
    ends.erase(first);
    complete_message(qp, immediate, now);
  }
  // A gap filled moves the acknowledged point past what was placed ahead of it: say so at once.
  if (ack_requested || next > psn + 1) queue_acknowledge(qp, nic::aeth::kAck, next - 1);
}

void Transport::report_losses(ResponderQp& qp, ReorderWindow& window, uint64_t arrived) {
  const uint64_t loss_after = config_.out_of_order.loss_after;
  if (arrived < qp.expected_psn + loss_after) return;
  // Every PSN at least loss_after behind this arrival that has not come is lost, not late.
  const uint64_t through = arrived - loss_after;
  for (uint64_t psn = std::max(qp.expected_psn, window.reported_through); psn <= through; ++psn) {
    if (window.reaches(psn, qp.expected_psn) && (window.placed(psn) || window.reported(psn))) {
      continue;
    }
    ++ports_[qp.port].counters.missing_packets;
    queue_acknowledge(qp, nic::aeth::kNakSequenceError, psn);
  }
  window.reported_through = std::max(window.reported_through, through + 1);
}

void Transport::on_data(uint32_t responder, const nic::Packet& packet, clock::Nanos now) {
  ResponderQp& qp = responders_[responder];
  RequesterQp* requester = qp.has_local_requester() ? &requesters_[qp.requester_or_marks] : nullptr;
  TransportPort& port = ports_[qp.port];
  TransportPortCounters& counters = port.counters;
  ++qp.counters.packets;

  // Notification point: every CE-marked arrival counts, in order or not; CNPs are paced per QP.
  if (packet.ecn == nic::ecn::kCe) {
    ++counters.ecn_marked_received;
    ++qp.counters.ecn_marked_received;
    if (requester == nullptr) {
      qp.count_mark_for_remote();
    } else if (requester->undelivered != kNoFlow) {
      ++flows_[requester->undelivered].ecn_marks;
    }
    if (config_.dcqcn.enabled) queue_cnp(qp, now);
  }

  const uint64_t psn = widen_psn(packet.psn, qp.expected_psn);
  const bool ack_requested = (packet.bth_flags & nic::bth_flag::kAckRequest) != 0;
  if (packet.trimmed) {
    ++counters.trimmed_packets;
    ++qp.counters.trimmed_packets;
  }
  if (port.receiver == config::Receiver::kOutOfOrder) {
    place_out_of_order(responder, packet, psn, ack_requested, now);
    return;
  }
  if (packet.trimmed) {
    // Go-back-N: a trimmed PSN is a gap that starts there. Asking for it at once spares waiting
    // for the next packet to show the gap, or for a timeout when it was the message's last.
    if (psn >= qp.expected_psn) report_gap(qp, psn + 1, psn);
    return;
  }
  if (psn == qp.expected_psn) {
    ++qp.expected_psn;
    qp.nak_outstanding = false;
    qp.counters.bytes += packet.payload_bytes;
    if (ends_message(packet.opcode)) complete_message(qp, immediate_of(packet), now);
    if (ack_requested) queue_acknowledge(qp, nic::aeth::kAck, psn);
  } else if (psn < qp.expected_psn) {
    // A duplicate: the requester went back further than needed, or our ACK was lost. Tell it
    // again how far we are.
    if (ack_requested) queue_acknowledge(qp, nic::aeth::kAck, qp.expected_psn - 1);
  } else {
    count_reordered(qp);
    report_gap(qp, psn, psn);
  }
}

void Transport::report_gap(ResponderQp& qp, uint64_t gap_end, uint64_t arrived) {
  // A gap: every PSN from the expected one to gap_end (not included) is missing. Ask for a
  // resend from the first; later out-of-order packets of the same pass are dropped silently.
  const bool requester_started_over = qp.at_or_below_highest_out_of_order(arrived);
  if (!qp.nak_outstanding || requester_started_over) {
    ports_[qp.port].counters.missing_packets += gap_end - qp.expected_psn;
    qp.nak_outstanding = true;
    queue_acknowledge(qp, nic::aeth::kNakSequenceError, qp.expected_psn);
  }
  qp.highest_out_of_order_psn = static_cast<uint32_t>(arrived);
}

void Transport::count_reordered(ResponderQp& qp) {
  ++ports_[qp.port].counters.reordered_packets;
  ++qp.counters.reordered_packets;
}

void Transport::deliver_flow(RequesterQp& requester, clock::Nanos now) {
  if (requester.undelivered == kNoFlow) return;
  FlowSlot& flow = flows_[requester.undelivered];
  flow.delivered_at = now;
  requester.undelivered = flow.next;
  // A copy: the observer may post flows, which may grow the pool under a reference.
  const FlowRecord record = record_of(flow, requester);
  observer_.on_flow_delivered(record);
}

nic::Packet Transport::control_packet(const ResponderQp& qp,
                                      const config::TrafficClass& traffic_class) const {
  nic::Packet packet;
  packet.src_port = ports_[qp.port].id;
  packet.dst_port = qp.remote_port;
  packet.udp_source_port = qp.udp_source_port;
  packet.priority = traffic_class.priority;
  packet.dscp = traffic_class.dscp;
  packet.ecn = static_cast<uint8_t>(traffic_class.ecn);
  packet.dest_qpn = qp.remote_qpn;
  return packet;
}

void Transport::queue_acknowledge(ResponderQp& qp, uint8_t syndrome, uint64_t psn) {
  TransportPort& port = ports_[qp.port];
  nic::Packet packet = control_packet(qp, port.qos.ack);
  packet.opcode = nic::opcode::kAcknowledge;
  packet.psn = wire_psn(psn);
  packet.aeth_syndrome = syndrome;
  packet.aeth_msn = qp.message_sequence & nic::kPsnMask;
  packet.wire_bytes = nic::wire_bytes(packet, port.format);
  if (syndrome == nic::aeth::kAck) {
    ++port.counters.acks_sent;
  } else {
    ++port.counters.naks_sent;
    ++qp.counters.naks_sent;
  }
  port.queue_control(packet);
  kick(qp.port, scheduler_.now());
}

void Transport::queue_cnp(ResponderQp& qp, clock::Nanos now) {
  if (qp.last_cnp_at != clock::kNever &&
      now - qp.last_cnp_at < static_cast<clock::Nanos>(config_.dcqcn.min_time_between_cnps_ns)) {
    return;
  }
  qp.last_cnp_at = now;
  TransportPort& port = ports_[qp.port];
  nic::Packet packet = control_packet(qp, port.qos.cnp);
  packet.opcode = nic::opcode::kCnp;
  packet.bth_flags = nic::bth_flag::kBecn;
  packet.wire_bytes = nic::wire_bytes(packet, port.format);
  ++port.counters.cnps_sent;
  ++qp.counters.cnps_sent;
  port.queue_control(packet);
  kick(qp.port, now);
}

}  // namespace etwire::transport

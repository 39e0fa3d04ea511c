// The responder half of a connection: in-order acceptance, coalesced ACKs, NAK on a sequence
// error, delivery of whole messages, and the ECN notification point.
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

}  // namespace

void Transport::on_data(uint32_t responder, const nic::Packet& packet, clock::Nanos now) {
  ResponderQp& qp = responders_[responder];
  RequesterQp* requester = qp.local_requester == kNoQp ? nullptr : &requesters_[qp.local_requester];
  TransportPortCounters& counters = ports_[qp.port].counters;
  ++qp.counters.packets;

  // Notification point: every CE-marked arrival counts, in order or not; CNPs are paced per QP.
  if (packet.ecn == nic::ecn::kCe) {
    ++counters.ecn_marked_received;
    ++qp.counters.ecn_marked_received;
    if (requester == nullptr) {
      ++qp.ecn_marks_for_remote;
    } else if (requester->undelivered != kNoFlow) {
      ++flows_[requester->undelivered].ecn_marks;
    }
    if (config_.dcqcn.enabled) queue_cnp(qp, now);
  }

  const uint64_t psn = widen_psn(packet.psn, qp.expected_psn);
  const bool ack_requested = (packet.bth_flags & nic::bth_flag::kAckRequest) != 0;
  if (psn == qp.expected_psn) {
    ++qp.expected_psn;
    qp.nak_outstanding = false;
    qp.counters.bytes += packet.payload_bytes;
    if (ends_message(packet.opcode)) {
      ++qp.message_sequence;
      if (requester == nullptr) {
        observer_.on_delivered_to_responder(
            qp.remote_qpn, now, qp.ecn_marks_for_remote,
            frame::has_immediate(packet.opcode) ? packet.immediate : 0);
        qp.ecn_marks_for_remote = 0;
      } else if (!requester->failed) {
        deliver_flow(*requester, now);
      }
    }
    if (ack_requested) queue_acknowledge(qp, nic::aeth::kAck, psn);
  } else if (psn < qp.expected_psn) {
    // A duplicate: the requester went back further than needed, or our ACK was lost. Tell it
    // again how far we are.
    if (ack_requested) queue_acknowledge(qp, nic::aeth::kAck, qp.expected_psn - 1);
  } else {
    // A gap: a packet was lost. Ask for a resend from the first missing PSN; later out-of-order
    // packets of the same pass are dropped silently.
    const bool requester_started_over = psn <= qp.highest_out_of_order_psn;
    if (!qp.nak_outstanding || requester_started_over) {
      counters.missing_packets += psn - qp.expected_psn;
      qp.nak_outstanding = true;
      queue_acknowledge(qp, nic::aeth::kNakSequenceError, qp.expected_psn);
    }
    qp.highest_out_of_order_psn = psn;
  }
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
  port.control[packet.priority & (kPriorities - 1)].push_back(packet);
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
  port.control[packet.priority & (kPriorities - 1)].push_back(packet);
  kick(qp.port, now);
}

}  // namespace etwire::transport

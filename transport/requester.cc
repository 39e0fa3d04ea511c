// The requester half of a connection: cutting flows into packets, acknowledgements, go-back-N
// (or, to out-of-order receivers, one packet sent again per NAK), the retransmission timer, and
// the reaction to CNPs.
#include <algorithm>

#include "nic/frame_size.h"
#include "transport/entropy.h"
#include "transport/event_tag.h"
#include "transport/psn.h"
#include "transport/retransmit_timing.h"
#include "transport/segmentation.h"
#include "transport/transport.h"

namespace etwire::transport {

nic::Packet Transport::next_data_packet(uint32_t requester, clock::Nanos now) {
  RequesterQp& qp = requesters_[requester];
  if (qp.resend_pending) return resend_packet(requester, now);
  const TransportPort& port = ports_[qp.port];
  FlowSlot& flow = flows_[qp.cursor];
  const uint32_t index = qp.cursor_packet;
  const uint64_t psn = qp.next_psn;

  nic::Packet packet;
  packet.src_port = port.id;
  packet.dst_port = qp.remote_port;
  packet.udp_source_port = data_source_port(config_.entropy, qp.udp_source_port, psn);
  packet.priority = port.qos.data.priority;
  packet.dscp = port.qos.data.dscp;
  packet.ecn = static_cast<uint8_t>(port.qos.data.ecn);
  const config::RdmaOp op =
      flow.tags.plain_write && config_.op == config::RdmaOp::kWriteWithImmediate
          ? config::RdmaOp::kWrite
          : config_.op;
  packet.opcode = opcode_for(op, index, flow.packets);
  packet.dest_qpn = qp.remote_qpn;
  packet.psn = wire_psn(psn);
  packet.payload_bytes = payload_of(flow.bytes, config_.pmtu, index, flow.packets);
  const bool last = index + 1 == flow.packets;
  if (wants_ack(psn, config_.ack_interval, last)) packet.bth_flags |= nic::bth_flag::kAckRequest;
  if (index == 0) {
    // RETH: where the data lands. The emulator's buffers are virtual; the flow id stands in for
    // the address so a capture shows which flow a message belongs to.
    packet.reth_virtual_address = flow.flow_id;
    packet.reth_length = static_cast<uint32_t>(std::min<uint64_t>(flow.bytes, UINT32_MAX));
  }
  if (last) {
    packet.immediate =
        flow.tags.wire_tag != 0 ? flow.tags.wire_tag : static_cast<uint32_t>(flow.flow_id);
  }
  packet.wire_bytes = nic::wire_bytes(packet, port.format);
  if ((packet.bth_flags & nic::bth_flag::kAckRequest) == 0 &&
      retransmit_timing::acknowledge_every_packet(config_, packet.wire_bytes,
                                                  qp.reaction_point.current_rate_bps())) {
    packet.bth_flags |= nic::bth_flag::kAckRequest;
  }

  if (flow.first_byte_out == clock::kNever) flow.first_byte_out = now;
  TransportPortCounters& counters = ports_[qp.port].counters;
  ++counters.data_packets;
  counters.data_bytes += packet.wire_bytes;
  if (packet.udp_source_port != qp.udp_source_port) {  // only ever with sprayed entropy
    ++counters.sprayed_packets;
    ++sprayed_[requester];
  }
  if (psn < qp.highest_sent_psn) {
    ++flow.retransmitted_packets;
    ++counters.retransmitted_packets;
    ++qp.counters.retransmitted_packets;
  }

  qp.next_psn = psn + 1;
  qp.highest_sent_psn = std::max(qp.highest_sent_psn, qp.next_psn);
  if (last) {
    qp.cursor = flow.next;
    qp.cursor_packet = 0;
  } else {
    ++qp.cursor_packet;
  }
  qp.reaction_point.on_bytes_sent(packet.payload_bytes, now);
  if (qp.timeout_at == clock::kNever) {
    // Nothing was outstanding: no stall can have begun before this packet.
    qp.progress_stamp = retransmit_timing::StallClock(config_).stamp(now);
    arm_retransmit_timer(requester, now);
  }
  return packet;
}

void Transport::arm_retransmit_timer(uint32_t requester, clock::Nanos now) {
  RequesterQp& qp = requesters_[requester];
  qp.timeout_at = now + retransmit_timing::timeout(config_, qp.retries, qp.qpn);
  if (qp.timer_event_pending) return;  // it will find the new deadline and re-arm itself
  qp.timer_event_pending = true;
  scheduler_.run_at(qp.timeout_at, this,
                    event_tag::make(event_tag::Kind::kRetransmitTimer, requester));
}

void Transport::on_retransmit_timer(uint32_t requester, clock::Nanos now) {
  RequesterQp& qp = requesters_[requester];
  qp.timer_event_pending = false;
  if (qp.failed || qp.timeout_at == clock::kNever) return;
  if (now < qp.timeout_at) {
    qp.timer_event_pending = true;
    scheduler_.run_at(qp.timeout_at, this,
                      event_tag::make(event_tag::Kind::kRetransmitTimer, requester));
    return;
  }
  ++ports_[qp.port].counters.timeouts;
  ++qp.counters.timeouts;
  if (retries_exhausted(qp, now)) {
    fail_connection(requester, now);
    return;
  }
  go_back_to(qp, qp.acked_psn);
  if (qp.resend_pending) prune_resends(requester);  // the go-back sends them all
  arm_retransmit_timer(requester, now);
  make_ready(requester, now);
}

void Transport::on_acknowledge(uint32_t requester, const nic::Packet& packet, clock::Nanos now) {
  RequesterQp& qp = requesters_[requester];
  TransportPortCounters& counters = ports_[qp.port].counters;
  const uint64_t psn = widen_psn(packet.psn, qp.acked_psn);
  if (packet.aeth_syndrome == nic::aeth::kNakSequenceError) {
    ++counters.naks_received;
    ++qp.counters.naks_received;
    if (qp.to_out_of_order) {
      resend_one(requester, psn, now);
      return;
    }
    // Everything before the PSN the responder expects has arrived; resend from there.
    if (psn > qp.acked_psn) acknowledge_through(qp, psn - 1, now);
    if (psn < qp.acked_psn || psn > qp.highest_sent_psn) return;  // stale: already resolved
    if (nak_exhausts_retries(qp, now)) {
      fail_connection(requester, now);
      return;
    }
    go_back_to(qp, psn);
    arm_retransmit_timer(requester, now);
    make_ready(requester, now);
    return;
  }
  ++counters.acks_received;
  // After a go-back, the responder may acknowledge packets the requester is about to resend:
  // anything up to the highest PSN ever sent counts.
  if (psn + 1 > qp.acked_psn && psn < qp.highest_sent_psn) {
    acknowledge_through(qp, psn, now);
    if (qp.resend_pending) prune_resends(requester);
  }
}

bool Transport::retries_exhausted(RequesterQp& qp, clock::Nanos now) {
  if (config_.retransmission == config::Retransmission::kFixed) {
    return ++qp.retries > config_.retry_count;
  }
  // Adaptive: the count of timeouts only lengthens the next one; time without progress decides.
  if (qp.retries < UINT8_MAX) ++qp.retries;
  return retransmit_timing::StallClock(config_).exhausted(qp.progress_stamp, now);
}

bool Transport::nak_exhausts_retries(RequesterQp& qp, clock::Nanos now) {
  if (config_.retransmission == config::Retransmission::kFixed) {
    return config_.naks_count_as_retries && ++qp.retries > config_.retry_count;
  }
  // A NAK re-arms the timer, so a receiver that keeps sending them could keep the timeouts from
  // ever firing: the stall is checked here too.
  return retransmit_timing::StallClock(config_).exhausted(qp.progress_stamp, now);
}

void Transport::acknowledge_through(RequesterQp& qp, uint64_t psn, clock::Nanos now) {
  qp.acked_psn = psn + 1;
  qp.retries = 0;  // forward progress
  qp.progress_stamp = retransmit_timing::StallClock(config_).stamp(now);
  while (qp.head != kNoFlow) {
    FlowSlot& flow = flows_[qp.head];
    if (flow.first_psn + flow.packets > qp.acked_psn) break;
    const uint32_t done = qp.head;
    qp.head = flow.next;
    ++qp.counters.messages;
    qp.counters.bytes += flow.bytes;
    if (qp.head == kNoFlow) {
      qp.tail = kNoFlow;
      // Before the observer hears of the finish: it may post the QP's next message.
      end_busy(qp, now);
    }
    finish_flow(done, qp, FlowStatus::kCompleted, now);
  }
  // Acknowledged beyond the resend point of a go-back: skip what already arrived.
  if (qp.next_psn < qp.acked_psn) go_back_to(qp, qp.acked_psn);
  if (qp.has_unacknowledged()) {
    qp.timeout_at = now + retransmit_timing::timeout(config_, 0, qp.qpn);
  } else {
    qp.timeout_at = clock::kNever;
  }
}

void Transport::go_back_to(RequesterQp& qp, uint64_t psn) {
  qp.next_psn = psn;
  uint32_t slot = qp.head;
  while (slot != kNoFlow && flows_[slot].first_psn + flows_[slot].packets <= psn) {
    slot = flows_[slot].next;
  }
  qp.cursor = slot;
  qp.cursor_packet = slot == kNoFlow ? 0 : static_cast<uint32_t>(psn - flows_[slot].first_psn);
}

void Transport::resend_one(uint32_t requester, uint64_t psn, clock::Nanos now) {
  RequesterQp& qp = requesters_[requester];
  // Acknowledged since, or not sent yet (a go-back after a timeout will send it anyway).
  if (qp.failed || psn < qp.acked_psn || psn >= qp.next_psn) return;
  // Each NAK names another lost packet, not a retry of the last one: only adaptive
  // retransmission's time without progress ends the connection here.
  if (config_.retransmission == config::Retransmission::kAdaptive &&
      retransmit_timing::StallClock(config_).exhausted(qp.progress_stamp, now)) {
    fail_connection(requester, now);
    return;
  }
  resends_[requester].push_back(psn);
  qp.resend_pending = true;
  make_ready(requester, now);
}

nic::Packet Transport::resend_packet(uint32_t requester, clock::Nanos now) {
  RequesterQp& qp = requesters_[requester];
  RingQueue<uint64_t>& resends = resends_[requester];
  const uint64_t psn = resends.pop_front();
  // Send that one packet as the cursor would, then put the cursor back where it was.
  const uint64_t next_psn = qp.next_psn;
  const uint32_t cursor = qp.cursor;
  const uint32_t cursor_packet = qp.cursor_packet;
  qp.resend_pending = false;
  go_back_to(qp, psn);
  const nic::Packet packet = next_data_packet(requester, now);
  qp.next_psn = next_psn;
  qp.cursor = cursor;
  qp.cursor_packet = cursor_packet;
  qp.resend_pending = !resends.empty();
  return packet;
}

void Transport::prune_resends(uint32_t requester) {
  RequesterQp& qp = requesters_[requester];
  RingQueue<uint64_t>& resends = resends_[requester];
  for (size_t n = resends.size(); n > 0; --n) {
    const uint64_t psn = resends.pop_front();
    if (psn >= qp.acked_psn && psn < qp.next_psn) resends.push_back(psn);
  }
  qp.resend_pending = !resends.empty();
}

void Transport::on_cnp(uint32_t requester, clock::Nanos now) {
  RequesterQp& qp = requesters_[requester];
  qp.reaction_point.on_cnp(now);  // counts every CNP, whether DCQCN is on or not
  // The flow being sent when the notification arrives is the one that met the congestion.
  const uint32_t flow = qp.cursor != kNoFlow ? qp.cursor : qp.tail;
  if (flow != kNoFlow) ++flows_[flow].cnps;
}

void Transport::fail_connection(uint32_t requester, clock::Nanos now) {
  RequesterQp& qp = requesters_[requester];
  if (qp.head != kNoFlow) end_busy(qp, now);
  qp.failed = true;
  qp.resend_pending = false;
  qp.timeout_at = clock::kNever;
  qp.cursor = kNoFlow;
  qp.undelivered = kNoFlow;
  FlowStatus status = FlowStatus::kRetryExceeded;
  while (qp.head != kNoFlow) {
    const uint32_t slot = qp.head;
    qp.head = flows_[slot].next;
    finish_flow(slot, qp, status, now);
    status = FlowStatus::kFlushed;
  }
  qp.tail = kNoFlow;
}

FlowRecord Transport::record_of(const FlowSlot& flow, const RequesterQp& qp) const {
  FlowRecord record;
  record.flow_id = flow.flow_id;
  record.tags = flow.tags;
  record.src_port = ports_[qp.port].id;
  record.dst_port = qp.remote_port;
  record.qpn = qp.qpn;
  record.dest_qpn = qp.remote_qpn;
  record.bytes = flow.bytes;
  record.posted_at = flow.posted_at;
  record.first_byte_out = flow.first_byte_out;
  record.delivered_at = flow.delivered_at;
  record.finished_at = flow.finished_at;
  record.packets = flow.packets;
  record.retransmitted_packets = flow.retransmitted_packets;
  record.cnps = flow.cnps;
  record.ecn_marks = flow.ecn_marks;
  record.status = flow.status;
  return record;
}

void Transport::start_busy(RequesterQp& qp, clock::Nanos now) {
  qp.busy_ns -= now;
  qp.busy_rate_integral -= qp.reaction_point.rate_time_integral(now);
}

void Transport::end_busy(RequesterQp& qp, clock::Nanos now) {
  qp.busy_ns += now;
  qp.busy_rate_integral += qp.reaction_point.rate_time_integral(now);
}

void Transport::finish_flow(uint32_t slot, const RequesterQp& qp, FlowStatus status,
                            clock::Nanos now) {
  FlowSlot& held = flows_[slot];
  held.status = status;
  held.finished_at = now;
  if (status == FlowStatus::kCompleted) {
    ++totals_.flows_completed;
  } else {
    ++totals_.flows_failed;
  }
  // Free the slot before telling the observer, and give it a copy: the observer may post flows,
  // which may reuse the slot or grow the pool.
  const FlowRecord record = record_of(held, qp);
  flows_.release(slot);
  observer_.on_flow_finished(record);
}

}  // namespace etwire::transport

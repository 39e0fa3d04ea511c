// The transmit side of a port: which packet goes next, and when.
#include "transport/transport_port.h"

#include <algorithm>
#include <bit>

#include "transport/event_tag.h"
#include "transport/transport.h"

namespace etwire::transport {

void Transport::schedule_kick(uint32_t port, clock::Nanos when) {
  TransportPort& target = ports_[port];
  // One pending look per port is enough: an earlier one re-schedules what it cannot do yet.
  if (when >= target.kick_pending_at) return;
  target.kick_pending_at = when;
  scheduler_.run_at(when, this, event_tag::make(event_tag::Kind::kPortKick, port));
}

void Transport::make_ready(uint32_t requester, clock::Nanos now, clock::Nanos due) {
  RequesterQp& qp = requesters_[requester];
  if (qp.state != SendState::kIdle || !qp.has_packet_to_send()) return;
  if (qp.next_send_at > now) {
    qp.state = SendState::kWaiting;
    // A gap timed at a low rate can be far longer than the time to the next rate increase (a
    // packet at 1 Mb/s is 33 ms of gap): wake at the increase to re-time it.
    const clock::Nanos increase = qp.reaction_point.next_timer_increase(now);
    const clock::Nanos wake =
        increase > now ? std::min(qp.next_send_at, increase) : qp.next_send_at;
    scheduler_.run_at(wake, this, event_tag::make(event_tag::Kind::kPacerWake, requester));
    return;
  }
  qp.state = SendState::kReady;
  ports_[qp.port].ready.push_back(requester);
  kick(qp.port, now, due);
}

void Transport::retime_pacer(RequesterQp& qp, clock::Nanos now) {
  if (now >= qp.next_send_at) return;
  const uint64_t rate = qp.reaction_point.rate_bps(now);
  if (rate <= qp.pacer.rate_bps()) return;
  // The rate rose while the QP waited: the gap after its last packet is as long as that packet
  // takes at the new rate (a fresh timer: the sub-nanosecond remainder of the old rate is moot).
  clock::LineRateTimer pacer(rate);
  qp.next_send_at = std::max(now, pacer.transmit(qp.paced_start, qp.paced_bytes));
  qp.pacer = pacer;
}

void Transport::kick(uint32_t port_index, clock::Nanos now, clock::Nanos due) {
  TransportPort& port = ports_[port_index];
  const clock::Nanos free_at = port.wire.free_at();
  if (free_at > now) {
    schedule_kick(port_index, free_at);
    return;
  }
  const clock::Nanos start = std::min(now, std::max(due, now - port.catch_up));
  if (send_control(port, now, start) || send_data(port_index, now, start)) {
    // Catching up on the wall clock, the wire is still free before `now` after a packet: the
    // packets owed go here, a burst at most, instead of one event each. (On time, and always on
    // the virtual clock, a packet leaves the wire busy past `now` and this sends nothing more.)
    for (int more = 1; more < kCatchUpBurst && port.wire.free_at() <= now; ++more) {
      if (!send_control(port, now, start) && !send_data(port_index, now, start)) break;
    }
  } else {
    // Nothing could go: whatever waits is held by a pause; look again when the first one ends.
    clock::Nanos resume_at = clock::kNever;
    for (unsigned waiting = port.control_waiting(); waiting != 0; waiting &= waiting - 1) {
      resume_at = std::min(resume_at, port.paused_until[std::countr_zero(waiting)]);
    }
    if (!port.ready.empty()) {
      resume_at = std::min(resume_at, port.paused_until[port.qos.data.priority]);
    }
    if (resume_at != clock::kNever && resume_at > now) schedule_kick(port_index, resume_at);
    return;
  }
  // Something went out: look again when the wire is free if anything is still waiting.
  if (port.control_waiting() != 0 || !port.ready.empty()) {
    schedule_kick(port_index, port.wire.free_at());
  }
}

bool Transport::send_control(TransportPort& port, clock::Nanos now, clock::Nanos start) {
  // Highest class first; a paused class waits (its pause expiry schedules a kick).
  for (unsigned waiting = port.control_waiting(); waiting != 0;) {
    const int priority = std::bit_width(waiting) - 1;
    waiting &= ~(1u << priority);
    if (port.paused_until[priority] > now) continue;
    const nic::Packet packet = port.take_control(priority);
    port.wire.transmit(start, packet.wire_bytes);
    port.nic->transmit(packet, now);
    return true;
  }
  return false;
}

bool Transport::send_data(uint32_t port_index, clock::Nanos now, clock::Nanos start) {
  TransportPort& port = ports_[port_index];
  // Every data QP of a port sends on the port's data class, so a pause stops them all.
  if (port.paused_until[port.qos.data.priority] > now) return false;
  while (!port.ready.empty()) {
    const uint32_t requester = port.ready.pop_front();
    RequesterQp& qp = requesters_[requester];
    qp.state = SendState::kIdle;
    if (!qp.has_packet_to_send()) continue;
    if (qp.next_send_at > now) {
      make_ready(requester, now);  // schedules its wake-up
      continue;
    }
    const nic::Packet packet = next_data_packet(requester, now);
    // Before `now` only when catching up on the wall clock (see set_catch_up).
    const clock::Nanos wire_start = std::max(start, port.wire.free_at());
    port.wire.transmit(wire_start, packet.wire_bytes);
    port.nic->transmit(packet, now);
    // Below line rate the pacer spaces the QP's packets at the reaction point's rate (the QP
    // waits for free_at() of its pacer, which keeps it exact); at line rate the wire alone
    // decides and the QP rejoins the round-robin behind the others.
    const uint64_t rate = qp.reaction_point.rate_bps(now);
    if (rate >= port.speed_bps) {
      qp.next_send_at = now;  // only the wire limits it
    } else {
      qp.pacer.set_rate(rate);
      qp.paced_start = std::max(wire_start, qp.pacer.free_at());
      qp.next_send_at = qp.pacer.transmit(wire_start, packet.wire_bytes);
      qp.paced_bytes = packet.wire_bytes;
    }
    if (qp.has_packet_to_send()) {
      // Catching up, the wire may be free before `now`: a QP due by then is ready as well (and
      // must not go through make_ready, which would kick the port again from in here).
      if (qp.next_send_at <= std::max(now, port.wire.free_at())) {
        qp.state = SendState::kReady;
        port.ready.push_back(requester);
      } else {
        make_ready(requester, now);
      }
    }
    return true;
  }
  return false;
}

void Transport::on_pause_frame(uint32_t port_index, const nic::Packet& packet, clock::Nanos now) {
  TransportPort& port = ports_[port_index];
  const uint8_t priority = packet.pfc_priority & (kPriorities - 1);
  if (packet.pfc_quanta == 0) {
    ++port.counters.resumes_received;
    port.paused_until[priority] = now;
    kick(port_index, now);
    return;
  }
  ++port.counters.pauses_received;
  // A quantum is 512 bit times at the port's speed: 64 bytes of wire time.
  const clock::Nanos pause =
      clock::LineRateTimer::duration(uint64_t{packet.pfc_quanta} * 64, port.speed_bps);
  port.paused_until[priority] = now + pause;
  schedule_kick(port_index, port.paused_until[priority]);
}

}  // namespace etwire::transport

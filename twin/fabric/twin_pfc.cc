// PFC in the fabric twin: switch ports pausing their link partners when an ingress account
// crosses XOFF, refreshing the pause while it stays above XON, resuming below it; ports honouring
// the pauses they receive; NIC ports receiving pauses (for the transport) and storming.
#include "nic/pfc_frame.h"
#include "twin/fabric/fabric_twin.h"
#include "twin/fabric/twin_event.h"

namespace etwire::twin {

void FabricTwin::send_pfc_frame(uint32_t link_index, uint8_t priority, uint16_t quanta,
                                clock::Nanos now, WireCounters& sender) {
  Link& link = links_[link_index];
  const clock::Nanos last_byte_out = link.serialize(now, pfc_frame_bytes_);
  ++sender.tx_packets;
  sender.tx_bytes += pfc_frame_bytes_;
  ++(quanta != 0 ? sender.pfc_pauses_sent : sender.pfc_resumes_sent);
  if (link.sender_tap != nullptr) {
    link.sender_tap->departs(nic::pfc_frame(link.from.index, link.from.index, priority, quanta),
                             now);
  }
  if (!link.up) {
    ++sender.drops_link_down;
    return;
  }
  if (link.loses_frame()) {
    ++sender.drops_fault;
    return;
  }
  const clock::Nanos arrives_at = last_byte_out + link.propagation_ns;
  if (link.crosses_to != kNoCrossing) {  // the far end is another partition's
    Crossing crossing{arrives_at, link_global_[link_index], true, {}};
    crossing.packet.pfc_priority = priority;
    crossing.packet.pfc_quanta = quanta;
    crossings_out_[link.crosses_to].push_back(crossing);
    return;
  }
  // A PFC frame carries nothing but its class and quanta, so the event tag is the whole frame:
  // it needs neither a pool slot nor a place in the link's in-flight FIFO.
  scheduler_.run_at(arrives_at, this,
                    twin_tag::make(TwinEvent::kPauseArrival,
                                   twin_tag::pause_frame(link_index, priority, quanta)));
}

void FabricTwin::pfc_frame_arrives(uint64_t payload, clock::Nanos now) {
  const uint32_t link_index = twin_tag::index_of(payload);
  const uint8_t priority = twin_tag::pause_priority(payload);
  const uint16_t quanta = twin_tag::pause_quanta(payload);
  Link& link = links_[link_index];
  if (!link.up) {
    ++counters_of(link.from).drops_link_down;
    return;
  }
  WireCounters& receiver_counters = counters_of(link.to);
  ++receiver_counters.rx_packets;
  receiver_counters.rx_bytes += pfc_frame_bytes_;
  ++(quanta != 0 ? receiver_counters.pfc_pauses_received : receiver_counters.pfc_resumes_received);
  // Link-local: no fabric source, both port fields name the receiving end.
  const nic::Packet frame = nic::pfc_frame(link.to.index, link.to.index, priority, quanta);
  if (link.receiver_tap != nullptr) link.receiver_tap->arrives(frame, now);

  if (link.to.is_host()) {
    // The NIC does not pause itself: the transport owns its send queues and honours the frame.
    if (nic::PacketReceiver* receiver = hosts_[link.to_slot].port.receiver()) {
      receiver->receive(frame, now);
    }
    return;
  }
  const uint32_t port_index = link.to_slot;
  // The pause is timed at the rate of the port it stops: the link back toward the frame's sender.
  const uint64_t rate = links_[switch_ports_[port_index].out_link].wire.rate_bps();
  switch_ports_[port_index].egress.pause_until(priority, now + pause_duration(quanta, rate));
  // A resume (or a pause that has already run out) may let a waiting class go now; a longer
  // pause is picked up when the port next plans.
  try_start(port_index, now);
}

void FabricTwin::owe_pfc_frame(uint32_t port_index, uint8_t priority, uint16_t quanta,
                               clock::Nanos now) {
  switch_ports_[port_index].egress.owe_pfc_frame(priority, quanta);
  try_start(port_index, now);
}

void FabricTwin::refresh_pause(uint64_t payload, clock::Nanos now) {
  const uint32_t index = twin_tag::index_of(payload);
  const uint32_t port_index = index / 8;
  const auto priority = static_cast<uint8_t>(index % 8);
  SwitchPort& port = switch_ports_[port_index];
  // Stale when the class resumed (and perhaps paused again) since this refresh was armed.
  if (!port.pfc.pausing(priority) ||
      twin_tag::generation_of(payload) !=
          (port.pfc.generation(priority) & twin_tag::kGenerationMask)) {
    return;
  }
  scheduler_.run_at(now + port.pause_refresh_ns, this,
                    twin_tag::make(TwinEvent::kPauseRefresh, payload));
  owe_pfc_frame(port_index, priority, 0xFFFF, now);
}

void FabricTwin::storm_tick(uint32_t storm_index, clock::Nanos now) {
  const PfcStorm storm = storms_[storm_index];
  if (now >= storm.until) return;
  Host& host = hosts_[host_slot_[storm.host]];
  send_pfc_frame(host.out_link, storm.priority, 0xFFFF, now, host.counters);
  // Half a pause lifetime apart, as the switch refreshes its own pauses: the partner stays
  // paused without a gap for the whole storm.
  const clock::Nanos next = now + pause_duration(0xFFFF, links_[host.out_link].wire.rate_bps()) / 2;
  if (next < storm.until) {
    scheduler_.run_at(next, this, twin_tag::make(TwinEvent::kStormTick, storm_index));
  }
}

}  // namespace etwire::twin

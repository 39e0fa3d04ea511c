// The per-packet path of the fabric twin: a NIC port transmits, links carry, switches queue and
// forward, NIC ports receive. This is the hot loop: it allocates nothing once the pool, the rings
// and the scheduler's heap have grown to the run's peak, and it never logs.
#include <stdexcept>
#include <string>

#include "nic/frame_size.h"
#include "twin/fabric/fabric_twin.h"
#include "twin/fabric/twin_event.h"

namespace etwire::twin {

namespace {

[[noreturn]] void reject(const std::string& port, const std::string& problem) {
  throw std::invalid_argument("fabric twin: port \"" + port + "\" transmitted " + problem);
}

bool ecn_capable(uint8_t codepoint) {
  return codepoint == nic::ecn::kEct0 || codepoint == nic::ecn::kEct1;
}

}  // namespace

void FabricTwin::transmit_from_host(uint32_t host_slot, const nic::Packet& packet,
                                    clock::Nanos now) {
  Host& source = hosts_[host_slot];
  if (packet.priority >= kPriorities) {
    reject(
        layout_->host_name(source.port.host()),
        "a packet on priority " + std::to_string(packet.priority) + " (802.1p classes are 0..7)");
  }
  if (packet.kind == nic::PacketKind::kPfcPause) {
    // The transport (or a test) pausing the switch port it is cabled to.
    send_pfc_frame(source.out_link, packet.pfc_priority & 7u, packet.pfc_quanta, now,
                   source.counters);
    return;
  }
  if (packet.dst_port >= layout_->hosts()) {
    reject(layout_->host_name(source.port.host()),
           "a packet to port index " + std::to_string(packet.dst_port) + ", but the fabric has " +
               std::to_string(layout_->hosts()) + " ports");
  }
  if (packet.wire_bytes == 0) {
    reject(layout_->host_name(source.port.host()),
           "a packet of 0 wire bytes (set Packet::wire_bytes)");
  }
  launch(source.out_link, pool_.acquire(packet), packet.wire_bytes, now, source.counters);
}

void FabricTwin::launch(uint32_t link_index, uint32_t slot, uint32_t bytes, clock::Nanos now,
                        WireCounters& sender) {
  Link& link = links_[link_index];
  if (link.sender_tap != nullptr) link.sender_tap->departs(pool_[slot], now);
  // A frame on a dead or lossy link still takes its time on the sending wire.
  const clock::Nanos last_byte_out = link.serialize(now, bytes);
  ++sender.tx_packets;
  sender.tx_bytes += bytes;
  if (!link.up) {
    ++sender.drops_link_down;
    pool_.release(slot);
    return;
  }
  if (link.loses_frame()) {
    ++sender.drops_fault;
    pool_.release(slot);
    return;
  }
  if (link.corrupts_frame()) pool_[slot].icrc_bad = true;
  const clock::Nanos arrives_at = link.arrival(last_byte_out);
  if (link.crosses_to != kNoCrossing) {  // the far end is another partition's
    crossings_out_[link.crosses_to].push_back(
        Crossing{arrives_at, link_global_[link_index], false, pool_[slot]});
    pool_.release(slot);
    return;
  }
  const bool first_in_flight = link.in_flight.empty();
  link.in_flight.push_back(InFlightPacket{slot, arrives_at});
  // Only the oldest packet on a link has an arrival event; later ones are scheduled in turn.
  if (first_in_flight) {
    scheduler_.run_at(
        arrives_at, this,
        twin_tag::make(TwinEvent::kFrameArrival, twin_tag::frame_arrival(link_index, slot)));
  }
}

void FabricTwin::frame_arrives(uint32_t link_index, clock::Nanos now) {
  Link& link = links_[link_index];
  const uint32_t slot = link.in_flight.front().slot;
  link.in_flight.pop_front();
  if (!link.in_flight.empty()) {
    const InFlightPacket& next = link.in_flight.front();
    scheduler_.run_at(
        next.arrives_at, this,
        twin_tag::make(TwinEvent::kFrameArrival, twin_tag::frame_arrival(link_index, next.slot)));
  }
  if (!link.up) {  // the link died while the frame was on it
    ++counters_of(link.from).drops_link_down;
    pool_.release(slot);
    return;
  }
  if (link.receiver_tap != nullptr) link.receiver_tap->arrives(pool_[slot], now);
  if (link.to.is_host()) {
    deliver_to_host(link.to_slot, slot, now);
  } else {
    arrive_at_switch(link.to_slot, slot, now);
  }
}

void FabricTwin::deliver_to_host(uint32_t host_slot, uint32_t slot, clock::Nanos now) {
  // Copy out and free the slot first: the receiver may transmit at once (an ACK), which may grow
  // the pool and move the slot under a reference.
  const nic::Packet packet = pool_[slot];
  pool_.release(slot);
  Host& destination = hosts_[host_slot];
  ++destination.counters.rx_packets;
  destination.counters.rx_bytes += packet.wire_bytes;
  if (packet.icrc_bad) {
    ++destination.counters.drops_bad_icrc;
    return;
  }
  if (nic::PacketReceiver* receiver = destination.port.receiver()) receiver->receive(packet, now);
}

void FabricTwin::arrive_at_switch(uint32_t ingress_index, uint32_t slot, clock::Nanos now) {
  SwitchPort& ingress = switch_ports_[ingress_index];
  nic::Packet& packet = pool_[slot];
  const uint32_t bytes = packet.wire_bytes;
  const uint8_t priority = packet.priority;
  ++ingress.counters.rx_packets;
  ingress.counters.rx_bytes += bytes;

  const EgressLinks links = layout_->egress_links(ingress.switch_index, packet);
  if (links.count == 0) {
    ++ingress.counters.drops_no_route;
    pool_.release(slot);
    return;
  }
  // A switch's ports are all held where the switch is. With ECMP everywhere (the common
  // case) the hash has picked already.
  const uint32_t route = links.port(
      !balancing_ ? links.hashed
                  : balancers_[ingress.buffer].pick(links, packet, now, [this](uint32_t port) {
                      return switch_ports_[port_slot_[port]].egress.queued_bytes();
                    }));
  const uint32_t egress_index = port_slot_[route];
  SwitchPort& egress = switch_ports_[egress_index];
  // Lossless traffic is bounded per ingress port by PFC, so with a per-port buffer it is charged
  // to its ingress port's share; lossy traffic to the share of the port it waits for. A queue
  // counted in packets that is full admits nothing, whatever bytes the buffer has left.
  const bool lossless = ingress.pfc.lossless(priority);
  const uint32_t share = per_port_buffer_ && lossless ? ingress.global_index : route;
  const bool queue_full =
      queue_packet_limit_ > 0 && egress.egress.queued_packets(priority) >= queue_packet_limit_;
  const BufferCharge charge =
      queue_full ? BufferCharge{}
                 : buffers_[ingress.buffer].try_charge(ingress.global_index, share, bytes);
  if (!charge.admitted()) {
    trim_or_drop(egress_index, slot, now);
    return;
  }

  const bool capable = ecn_capable(packet.ecn);
  if (capable && !egress.red.marks_on_dequeue()) {
    mark_if_congested(egress, priority, packet, true, now);
  }
  egress.egress.enqueue(
      priority,
      QueuedPacket{slot, bytes, charge, lossless ? ingress_index : kNoSwitchPort, capable}, now);

  if (lossless && ingress.pfc.add(priority, bytes)) {
    owe_pfc_frame(ingress_index, priority, 0xFFFF, now);
    scheduler_.run_at(now + ingress.pause_refresh_ns, this,
                      twin_tag::make(TwinEvent::kPauseRefresh,
                                     twin_tag::with_generation(ingress_index * 8u + priority,
                                                               ingress.pfc.generation(priority))));
  }
  try_start(egress_index, now);
}

void FabricTwin::trim_or_drop(uint32_t egress_index, uint32_t slot, clock::Nanos now) {
  SwitchPort& egress = switch_ports_[egress_index];
  nic::Packet& packet = pool_[slot];
  EgressQueueStats& queue = egress.egress.stats(packet.priority);
  if (trimming_.enabled && packet.is_data() && !packet.trimmed) {
    // Cut to its headers, which go on ahead of the queues that overflowed: the receiver hears
    // of the loss within a one-way delay instead of a gap or a timeout later. The headers wait
    // apart from the buffer, which is full, in a queue of bounded bytes; they are lossy and
    // never marked (a CE on them would count the same congestion twice).
    const uint32_t header_bytes = nic::trimmed_wire_bytes(packet);
    if (egress.egress.depth_bytes(trimming_.priority) + header_bytes <= trimming_.queue_bytes) {
      ++egress.counters.trimmed;
      ++queue.trimmed;
      packet.trimmed = true;
      packet.wire_bytes = header_bytes;
      packet.payload_bytes = 0;
      packet.priority = trimming_.priority;
      const BufferCharge apart = buffers_[egress.buffer].hold_apart(header_bytes);
      egress.egress.enqueue(packet.priority,
                            QueuedPacket{slot, header_bytes, apart, kNoSwitchPort, false}, now);
      try_start(egress_index, now);
      return;
    }
  }
  ++egress.counters.drops_buffer;
  ++queue.drops;
  pool_.release(slot);
}

void FabricTwin::try_start(uint32_t port_index, clock::Nanos now) {
  SwitchPort& port = switch_ports_[port_index];
  EgressPort& egress = port.egress;
  Link& link = links_[port.out_link];
  const clock::Nanos wire_free = link.wire.free_at();
  if (now < wire_free) {
    if (egress.has_work()) wake_at(port_index, wire_free);
    return;
  }
  // PFC frames jump the queue: they go out as soon as the wire is free, ahead of any data and
  // regardless of pauses (a paused port may still pause its partner).
  if (egress.owes_pfc_frame()) {
    uint8_t priority;
    uint16_t quanta;
    egress.take_pfc_frame(priority, quanta);
    send_pfc_frame(port.out_link, priority, quanta, now, port.counters);
    if (egress.has_work()) wake_at(port_index, link.wire.free_at());
    return;
  }
  const int next = egress.next_class(now);
  if (next < 0) {
    // Idle, or every waiting class is paused: come back when the first pause runs out.
    const clock::Nanos resume = egress.earliest_resume(now);
    if (resume != clock::kNever) wake_at(port_index, resume);
    return;
  }
  const auto priority = static_cast<uint8_t>(next);
  if (shaping_ && shapers_[port_index].shapes()) [[unlikely]] {
    // The class's first frame takes its tokens here, once it may start. (Should a reordering
    // fault below send the second frame first, that one leaves on the first one's tokens.)
    TokenBucket& shaper = shapers_[port_index];
    const uint32_t bytes = egress.front_bytes(priority);
    const clock::Nanos ready = shaper.ready_at(bytes, now);
    if (ready > now) {  // the bucket fills before the class's next frame may start
      wake_at(port_index, ready);
      return;
    }
    shaper.take(bytes);
  }
  if (link.reorder_probability > 0 && egress.queued_packets(priority) >= 2 &&
      link.reorders_frame()) {
    egress.swap_first_two(priority);
    ++port.counters.reordered;
  }
  const QueuedPacket packet = egress.pop(priority, now);
  if (packet.ecn_capable && port.red.marks_on_dequeue()) {
    mark_if_congested(port, priority, pool_[packet.slot], false, now);
  }
  // RED's average decays while the queue is empty.
  if (port.red.averages() && egress.depth_bytes(priority) == 0) {
    port.red_average[priority].idle_since = now;
  }
  // The packet leaves the buffer when it starts on the wire: its bytes are the link's now.
  buffers_[port.buffer].release(packet.charge, packet.bytes);
  launch(port.out_link, packet.slot, packet.bytes, now, port.counters);
  if (packet.pfc_ingress_port != kNoSwitchPort &&
      switch_ports_[packet.pfc_ingress_port].pfc.remove(priority, packet.bytes)) {
    owe_pfc_frame(packet.pfc_ingress_port, priority, 0, now);
  }
  if (egress.has_work()) wake_at(port_index, link.wire.free_at());
}

void FabricTwin::mark_if_congested(SwitchPort& port, uint8_t priority, nic::Packet& packet,
                                   bool joining, clock::Nanos now) {
  // The depth now: ahead of the packet when it is joining the queue, behind it when leaving;
  // RED's average of what joining packets found, when it averages.
  uint64_t depth = port.egress.depth_bytes(priority);
  if (joining) {
    depth = port.red.judged_depth(port.red_average[priority], depth, packet.wire_bytes, now);
  }
  if (!port.red.decide(port.red_average[priority], depth, port.ecn_rng)) return;
  packet.ecn = nic::ecn::kCe;
  ++port.counters.ecn_marked;
  ++port.egress.stats(priority).ecn_marked;
}

void FabricTwin::wake_at(uint32_t port_index, clock::Nanos at) {
  EgressPort& egress = switch_ports_[port_index].egress;
  // A wake already due no later than `at` will re-plan then; only an earlier need re-arms, and
  // the new generation makes the later event stale.
  if (egress.wake_at <= at) return;
  egress.wake_at = at;
  ++egress.wake_generation;
  scheduler_.run_at(at, this,
                    twin_tag::make(TwinEvent::kEgressWake,
                                   twin_tag::with_generation(port_index, egress.wake_generation)));
}

}  // namespace etwire::twin

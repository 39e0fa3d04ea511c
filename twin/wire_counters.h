// What the twin counts for every port, on the NIC side of a host's cable and on every switch
// port. Frames are counted where they start on a wire (tx) and where they arrive (rx); pause
// frames count in tx/rx like any frame and also in the PFC counters.
#pragma once

#include <cstdint>

namespace etwire::twin {

struct WireCounters {
  uint64_t tx_packets = 0;
  uint64_t tx_bytes = 0;  // wire bytes (Packet::wire_bytes), preamble and gap included
  uint64_t rx_packets = 0;
  uint64_t rx_bytes = 0;

  // Switch ports: packets this port's egress queues marked CE.
  uint64_t ecn_marked = 0;

  // Drops, by cause. Buffer drops count at the switch egress port the packet was headed for;
  // fault and link-down drops at the port that put the frame on the faulty or dead link.
  uint64_t drops_buffer = 0;
  uint64_t drops_fault = 0;      // the link's drop probability
  uint64_t drops_link_down = 0;  // the link was down when the frame started or arrived
  // At the switch port a frame arrived on: the switch had no way to its destination (another
  // plane of a multi-plane fabric).
  uint64_t drops_no_route = 0;
  // At a NIC port: frames that arrived damaged (a lossy link's corrupt probability) and failed
  // the ICRC check.
  uint64_t drops_bad_icrc = 0;
  // At a switch port: frames that overtook the one ahead of them in their queue (a lossy link's
  // reorder probability).
  uint64_t reordered = 0;
  // At a switch port: data packets headed for its egress queues that found no room and were cut
  // to their headers instead of dropped (fabric.trimming).
  uint64_t trimmed = 0;

  // PFC frames: pauses (quanta > 0) and resumes (quanta 0) this port sent and received.
  uint64_t pfc_pauses_sent = 0;
  uint64_t pfc_resumes_sent = 0;
  uint64_t pfc_pauses_received = 0;
  uint64_t pfc_resumes_received = 0;

  WireCounters& operator+=(const WireCounters& other) {
    tx_packets += other.tx_packets;
    tx_bytes += other.tx_bytes;
    rx_packets += other.rx_packets;
    rx_bytes += other.rx_bytes;
    ecn_marked += other.ecn_marked;
    drops_buffer += other.drops_buffer;
    drops_fault += other.drops_fault;
    drops_link_down += other.drops_link_down;
    drops_no_route += other.drops_no_route;
    drops_bad_icrc += other.drops_bad_icrc;
    reordered += other.reordered;
    trimmed += other.trimmed;
    pfc_pauses_sent += other.pfc_pauses_sent;
    pfc_resumes_sent += other.pfc_resumes_sent;
    pfc_pauses_received += other.pfc_pauses_received;
    pfc_resumes_received += other.pfc_resumes_received;
    return *this;
  }
  bool operator==(const WireCounters&) const = default;

  uint64_t drops() const {
    return drops_buffer + drops_fault + drops_link_down + drops_no_route + drops_bad_icrc;
  }
};
// A counter added above must be added to operator+= too.
static_assert(sizeof(WireCounters) == 16 * sizeof(uint64_t));

}  // namespace etwire::twin

// A port's counters when it is cabled into the fabric twin: its NIC side there, the switch port
// facing it, and the transport that drives it. The loopback data plane and the software RNIC
// report their ports this way.
#pragma once

#include <cstddef>

#include "dataplane/port_counters.h"
#include "transport/transport_port.h"
#include "twin/fabric/fabric_twin.h"

namespace etwire::dataplane {

// From the counters of the port's NIC side and of the switch port facing it.
inline PortCounters twin_port_counters(const twin::WireCounters& nic,
                                       const twin::WireCounters& facing,
                                       const transport::TransportPortCounters& transport) {
  PortCounters counters;
  counters.tx_bytes = nic.tx_bytes;
  counters.rx_bytes = nic.rx_bytes;
  counters.tx_packets = nic.tx_packets;
  counters.rx_packets = nic.rx_packets;
  set_transport_counters(counters, transport);
  counters.pfc_pauses_sent = nic.pfc_pauses_sent;
  counters.pfc_pauses_received = nic.pfc_pauses_received;
  // Packets lost on the host's cable (either end) and in the queue of the switch port that
  // delivers to it.
  counters.drops = nic.drops() + facing.drops();
  counters.drops_buffer = nic.drops_buffer + facing.drops_buffer;
  counters.drops_link_down = nic.drops_link_down + facing.drops_link_down;
  counters.drops_fault = nic.drops_fault + facing.drops_fault;
  counters.drops_bad_icrc = nic.drops_bad_icrc + facing.drops_bad_icrc;
  counters.drops_other = nic.drops_no_route + facing.drops_no_route;
  return counters;
}

inline PortCounters twin_port_counters(const twin::FabricTwin& twin, size_t port,
                                       const transport::TransportPortCounters& transport) {
  return twin_port_counters(twin.host_counters(port),
                            twin.switch_port_counters(twin.layout().host_switch_port(port)),
                            transport);
}

}  // namespace etwire::dataplane

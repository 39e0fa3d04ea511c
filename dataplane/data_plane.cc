#include "dataplane/data_plane.h"

#include "nic/port_frame_format.h"
#include "twin/layout/configured_layout.h"

namespace etwire::dataplane {

double goodput_bytes_per_second(const config::RunConfig& config, size_t port) {
  const double payload = config.transport.pmtu;
  const double overhead = nic::data_packet_overhead(nic::frame_format(config, config.ports[port]));
  return payload / (payload + overhead) * static_cast<double>(config.ports[port].speed_bps) / 8.0;
}

frame::FrameAddresses wire_addresses(const WireEndpoint& from, const WireEndpoint& to,
                                     const config::RunConfig& config) {
  frame::FrameAddresses a;
  a.src_mac = from.mac.bytes;
  // Toward a router under test every frame is addressed to the router; it routes by IP.
  const config::PortConfig& port = twin::host_port_settings(config, from.port);
  const std::optional<config::MacAddress>& next_hop = port.next_hop_mac;
  a.dst_mac = next_hop ? next_hop->bytes : to.mac.bytes;
  a.ip_version = config.transport.ip_version;
  a.vlan_id = port.vlan;
  if (a.ip_version == 6) {
    a.src_ip = from.ipv6.value_or(config::Ipv6Address{}).bytes;
    a.dst_ip = to.ipv6.value_or(config::Ipv6Address{}).bytes;
  } else {
    for (int i = 0; i < 4; ++i) {
      a.src_ip[i] = static_cast<uint8_t>(from.ipv4.value >> (24 - 8 * i));
      a.dst_ip[i] = static_cast<uint8_t>(to.ipv4.value >> (24 - 8 * i));
    }
  }
  return a;
}

nic::WireRoute wire_route(const WireConnection& connection, const config::RunConfig& config) {
  nic::WireRoute route;
  route.requester = {connection.requester.port, connection.requester.qpn, 0,
                     connection.requester.wire_qpn};
  route.responder = {connection.responder.port, connection.responder.qpn, 0,
                     connection.responder.wire_qpn};
  route.forward = wire_addresses(connection.requester, connection.responder, config);
  route.backward = wire_addresses(connection.responder, connection.requester, config);
  return route;
}

}  // namespace etwire::dataplane

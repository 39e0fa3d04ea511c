#include "dataplane/loopback_data_plane.h"

#include <fmt/format.h>

#include <stdexcept>

#include "nic/port_frame_format.h"

namespace etwire::dataplane {

namespace {

std::vector<nic::loopback::TwinPortSpec> twin_ports(const config::RunConfig& config) {
  std::vector<nic::loopback::TwinPortSpec> specs;
  for (const config::PortConfig& port : config.ports) {
    if (port.backend != config::Backend::kLoopback) {
      throw std::invalid_argument(fmt::format(
          "{}: port \"{}\" ({}) uses the {} backend; a loopback run drives loopback ports only",
          config.source_file, port.name, port.key_path, config::backend_name(port.backend)));
    }
    specs.push_back({port.name, port.speed_bps});
  }
  return specs;
}

}  // namespace

LoopbackDataPlane::LoopbackDataPlane(const config::RunConfig& config,
                                     transport::FlowObserver& observer)
    : specs_(twin_ports(config)) {
  twin_ =
      std::make_unique<nic::loopback::FabricTwin>(config.fabric, specs_, clock_, config.run.seed);
  transport_ = std::make_unique<transport::Transport>(config.transport, clock_, observer);
  for (size_t p = 0; p < specs_.size(); ++p) {
    const config::PortConfig& port = config.ports[p];
    const nic::FrameFormat format = nic::frame_format(config, port);
    transport_->add_port(twin_->port(p), port.qos, format);
  }
}

transport::ConnectionId LoopbackDataPlane::connect(const WireConnection& connection) {
  const WireEndpoint& requester = connection.requester;
  const WireEndpoint& responder = connection.responder;
  // The transport drives every port, so a port's index there is its index in the run.
  transport_->open_responder(responder.port, responder.qpn, requester.port, requester.qpn,
                             connection.udp_source_port);
  transport_->open_requester(requester.port, requester.qpn, responder.port, responder.qpn,
                             connection.udp_source_port);
  return {requester.qpn, responder.qpn};
}

PortRecord LoopbackDataPlane::port_record(size_t port) const {
  const auto& nic = twin_->host_counters(port);
  const auto& facing = twin_->switch_port_counters(twin_->layout().host_switch_port(port));
  const auto& transport = transport_->port_counters(static_cast<uint32_t>(port));
  PortRecord record;
  record.name = specs_[port].name;
  record.speed_bps = specs_[port].speed_bps;
  record.tx_bytes = nic.tx_bytes;
  record.rx_bytes = nic.rx_bytes;
  record.tx_packets = nic.tx_packets;
  record.rx_packets = nic.rx_packets;
  record.data_packets = transport.data_packets;
  record.retransmitted_packets = transport.retransmitted_packets;
  record.ecn_marked_received = transport.ecn_marked_received;
  record.cnps_sent = transport.cnps_sent;
  record.cnps_received = transport.cnps_received;
  record.pfc_pauses_sent = nic.pfc_pauses_sent;
  record.pfc_pauses_received = nic.pfc_pauses_received;
  // Packets lost on the host's cable (either end) and in the queue of the switch port that
  // delivers to it.
  record.drops = nic.drops() + facing.drops();
  record.timeouts = transport.timeouts;
  return record;
}

}  // namespace etwire::dataplane

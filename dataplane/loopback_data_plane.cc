#include "dataplane/loopback_data_plane.h"

#include <fmt/format.h>

#include <stdexcept>

#include "dataplane/twin_port_counters.h"
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
                                     transport::FlowObserver& observer, uint32_t workers)
    : specs_(twin_ports(config)), join_(observer) {
  if (workers == 0) throw std::invalid_argument("loopback data plane: no workers");
  twin_ =
      std::make_unique<nic::loopback::FabricTwin>(config.fabric, specs_, clock_, config.run.seed);
  for (uint32_t w = 0; w < workers; ++w) {
    workers_.push_back(std::make_unique<Worker>(config.transport, clock_, join_));
  }
  for (size_t p = 0; p < specs_.size(); ++p) {
    const config::PortConfig& port = config.ports[p];
    const auto run_port = static_cast<uint32_t>(p);
    worker_of(run_port).add_port(twin_->port(p), run_port, 0, port.qos,
                                 nic::frame_format(config, port));
  }
}

transport::ConnectionId LoopbackDataPlane::connect(const WireConnection& connection) {
  const WireEndpoint& requester = connection.requester;
  const WireEndpoint& responder = connection.responder;
  join_.add_connection(requester.port, requester.qpn, responder.port, responder.qpn);
  const HalfPlace sending{requester.port, 0, requester.qpn};
  const HalfPlace receiving{responder.port, 0, responder.qpn};
  worker_of(responder.port).open(sending, receiving, connection.udp_source_port);
  if (&worker_of(requester.port) != &worker_of(responder.port)) {
    worker_of(requester.port).open(sending, receiving, connection.udp_source_port);
  }
  return {requester.qpn, responder.qpn};
}

void LoopbackDataPlane::post(transport::ConnectionId connection, uint64_t bytes,
                             const transport::FlowTags& tags) {
  join_.posted(connection.requester, bytes, tags, clock_.now());
  worker_of(join_.sending_port(connection.requester)).post(connection.requester, bytes, tags);
}

void LoopbackDataPlane::paced_rates_bps(std::vector<double>& per_port) {
  per_port.assign(specs_.size(), 0.0);
  for (auto& worker : workers_) worker->add_paced_rates(per_port);
}

PortRecord LoopbackDataPlane::port_record(size_t port) const {
  const auto p = static_cast<uint32_t>(port);
  PortRecord record;
  static_cast<PortCounters&>(record) = twin_port_counters(*twin_, port, worker_of(p).counters(p));
  record.name = specs_[port].name;
  record.speed_bps = specs_[port].speed_bps;
  return record;
}

}  // namespace etwire::dataplane

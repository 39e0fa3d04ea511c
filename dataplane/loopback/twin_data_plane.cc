#include "dataplane/loopback/twin_data_plane.h"

#include "dataplane/loopback/twin_port_counters.h"
#include "dataplane/loopback/twin_ports.h"

namespace etwire::dataplane {

TwinDataPlane::TwinDataPlane(const config::RunConfig& config, transport::FlowObserver& observer)
    : specs_(twin_ports(config)), run_ports_(config.ports.size()), join_(observer) {}

void TwinDataPlane::capture_if_recorded(const config::RunConfig& config,
                                        const TwinCapture::AttachTap& attach) {
  if (config.telemetry.record.pcap) {
    capture_ = std::make_unique<TwinCapture>(config, layout(), attach);
  }
}

void TwinDataPlane::begin_capture(const std::string& dir, clock::Nanos now) {
  if (capture_) capture_->begin(dir, now);
}

void TwinDataPlane::finish() {
  if (capture_) capture_->stop();
}

std::vector<std::string> TwinDataPlane::notes() const {
  std::vector<std::string> notes = fault_report();
  if (capture_) {
    for (std::string& note : capture_->notes()) notes.push_back(std::move(note));
  }
  return notes;
}

transport::ConnectionId TwinDataPlane::connect(const WireConnection& connection) {
  const WireEndpoint& requester = connection.requester;
  const WireEndpoint& responder = connection.responder;
  join_.add_connection(requester.port, requester.qpn, responder.port, responder.qpn);
  if (capture_) capture_->add_connection(connection);
  const HalfPlace sending{requester.port, 0, requester.qpn};
  const HalfPlace receiving{responder.port, 0, responder.qpn};
  Worker* responding = drives_here(responder.port) ? &worker_of(responder.port) : nullptr;
  Worker* requesting = drives_here(requester.port) ? &worker_of(requester.port) : nullptr;
  if (responding != nullptr) responding->open(sending, receiving, connection.udp_source_port);
  if (requesting != nullptr && requesting != responding) {
    requesting->open(sending, receiving, connection.udp_source_port);
  }
  return {requester.qpn, responder.qpn};
}

void TwinDataPlane::paced_rates_bps(std::vector<double>& per_port) {
  per_port.assign(specs_.size(), 0.0);
  for_each_worker([&](Worker& worker) { worker.add_paced_rates(per_port); });
  per_port.resize(run_ports_);
}

PortCounters TwinDataPlane::port_counters(size_t port) const {
  const auto p = static_cast<uint32_t>(port);
  return twin_port_counters(host_counters(port),
                            switch_port_counters(layout().host_switch_port(port)),
                            transport_counters(p));
}

PortRecord TwinDataPlane::port_record(size_t port) const {
  return twin_port_record(specs_[port], port_counters(port));
}

std::vector<std::string> TwinDataPlane::switch_port_names() const {
  return twin_switch_port_names(layout());
}

}  // namespace etwire::dataplane

#include "dataplane/loopback/loopback_data_plane.h"

#include <stdexcept>

#include "dataplane/loopback/twin_port_counters.h"
#include "dataplane/loopback/twin_ports.h"
#include "nic/port_frame_format.h"

namespace etwire::dataplane {

LoopbackDataPlane::LoopbackDataPlane(const config::RunConfig& config,
                                     transport::FlowObserver& observer, uint32_t workers)
    : specs_(twin_ports(config)), join_(observer) {
  if (workers == 0) throw std::invalid_argument("loopback data plane: no workers");
  twin_ = std::make_unique<twin::FabricTwin>(config.fabric, specs_, clock_, config.run.seed);
  for (uint32_t w = 0; w < workers; ++w) {
    workers_.push_back(std::make_unique<Worker>(config.transport, clock_, join_));
  }
  for (size_t p = 0; p < specs_.size(); ++p) {
    const config::PortConfig& port = config.ports[p];
    const auto run_port = static_cast<uint32_t>(p);
    worker_of(run_port).add_port(twin_->port(p), run_port, 0, port.qos,
                                 nic::frame_format(config, port));
  }
  if (config.telemetry.record.pcap) {
    capture_ = std::make_unique<TwinCapture>(config, twin_->layout(),
                                             [this](twin::Endpoint endpoint, twin::FrameTap* tap) {
                                               twin_->set_frame_tap(endpoint, tap);
                                             });
  }
}

void LoopbackDataPlane::capture_frames(const std::string& dir) {
  if (capture_) capture_->begin(dir, clock_.now());
}

void LoopbackDataPlane::finish() {
  if (capture_) capture_->stop();
}

std::vector<std::string> LoopbackDataPlane::notes() const {
  std::vector<std::string> notes = twin_->fault_report();
  if (capture_) {
    for (std::string& note : capture_->notes()) notes.push_back(std::move(note));
  }
  return notes;
}

transport::ConnectionId LoopbackDataPlane::connect(const WireConnection& connection) {
  const WireEndpoint& requester = connection.requester;
  const WireEndpoint& responder = connection.responder;
  join_.add_connection(requester.port, requester.qpn, responder.port, responder.qpn);
  if (capture_) capture_->add_connection(connection);
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

bool LoopbackDataPlane::append_qp_stats(std::vector<transport::QpStats>& out) {
  for (auto& worker : workers_) worker->append_qp_stats(out, clock_.now());
  return true;
}

LoopbackDataPlane::~LoopbackDataPlane() = default;

void LoopbackDataPlane::poll() {
  if (sampler_ && !clock_.idle()) sampler_->take_until(clock_.next_event_time());
  clock_.poll();
}

void LoopbackDataPlane::sample_queues(QueueSink& sink, clock::Nanos interval_ns) {
  if (interval_ns <= 0) throw std::invalid_argument("queue samples need an interval above 0");
  sampler_ = std::make_unique<TwinQueueSampler>(*twin_, sink, interval_ns);
}

std::vector<std::string> LoopbackDataPlane::switch_port_names() const {
  return twin_switch_port_names(twin_->layout());
}

PortCounters LoopbackDataPlane::port_counters(size_t port) const {
  const auto p = static_cast<uint32_t>(port);
  return twin_port_counters(*twin_, port, worker_of(p).counters(p));
}

PortRecord LoopbackDataPlane::port_record(size_t port) const {
  return twin_port_record(specs_[port], port_counters(port));
}

}  // namespace etwire::dataplane

#include "dataplane/worker.h"

#include <fmt/format.h>

#include <stdexcept>

namespace etwire::dataplane {

Worker::Worker(const config::TransportConfig& config, clock::Scheduler& clock,
               transport::FlowObserver& observer)
    : transport_(std::make_unique<transport::Transport>(config, clock, observer)) {}

void Worker::add_port(nic::Port& device, uint32_t port, uint16_t queue, const config::PortQos& qos,
                      const nic::FrameFormat& format, clock::Nanos catch_up) {
  if (port >= local_.size()) {
    local_.resize(port + 1, kNone);
    queues_.resize(port + 1, 0);
  }
  const uint32_t index = transport_->add_port(device, qos, format, port);
  transport_->set_catch_up(index, catch_up);
  local_[port] = index;
  queues_[port] = queue;
  run_port_.push_back(port);
}

void Worker::open(const HalfPlace& requester, const HalfPlace& responder,
                  uint16_t udp_source_port) {
  if (local(responder) != kNone) open_responder(requester, responder, udp_source_port);
  if (local(requester) != kNone) open_requester(requester, responder, udp_source_port);
}

void Worker::open_responder(const HalfPlace& requester, const HalfPlace& responder,
                            uint16_t udp_source_port) {
  transport_->open_responder(driven(responder), responder.qpn, requester.port, requester.qpn,
                             udp_source_port);
}

void Worker::open_requester(const HalfPlace& requester, const HalfPlace& responder,
                            uint16_t udp_source_port) {
  transport_->open_requester(driven(requester), requester.qpn, responder.port, responder.qpn,
                             udp_source_port);
}

uint32_t Worker::driven(const HalfPlace& half) const {
  const uint32_t index = local(half);
  if (index == kNone) {
    throw std::invalid_argument(
        fmt::format("worker: port {} queue {} is not driven here", half.port, half.queue));
  }
  return index;
}

void Worker::add_paced_rates(std::vector<double>& per_port) {
  transport_->paced_rates_bps(rates_);
  for (size_t index = 0; index < rates_.size(); ++index)
    per_port[run_port_[index]] += rates_[index];
}

}  // namespace etwire::dataplane

#include "dataplane/worker_loop.h"

#include <fmt/format.h>

#include <exception>
#include <stdexcept>

namespace etwire::dataplane {

namespace {

// Commands arrive in bursts when a collective starts (a message per peer and chunk); the main
// thread keeps what does not fit and sends it on its next pass.
constexpr size_t kCommandRing = 4096;
// Two reports per message at most; the main thread drains them on every pass.
constexpr size_t kReportRing = 16384;
// Counters are published every this many passes of the loop (about a millisecond).
constexpr uint64_t kPassesPerPublish = 1024;

}  // namespace

WorkerLoop::WorkerLoop(const config::TransportConfig& config, PollHook& hook)
    : hook_(hook),
      clock_(0),  // no calibration of its own: share_time_with() gives it the main thread's
      worker_(config, clock_, *this),
      commands_(kCommandRing),
      reports_(kReportRing) {}

void WorkerLoop::publish_ports(std::vector<uint32_t> ports) {
  ports_ = std::move(ports);
  slot_.clear();
  for (size_t i = 0; i < ports_.size(); ++i) {
    if (ports_[i] >= slot_.size()) slot_.resize(ports_[i] + 1, 0);
    slot_[ports_[i]] = static_cast<uint32_t>(i);
  }
  published_ = std::make_unique<PublishedPortSample[]>(ports_.size());
}

void WorkerLoop::loop() {
  try {
    while (!stop_.load(std::memory_order_acquire)) run_once();
  } catch (const std::exception& e) {
    failure_ = e.what();
    failed_.store(true, std::memory_order_release);
  }
}

void WorkerLoop::check(const std::string& who) const {
  if (failed_.load(std::memory_order_acquire)) {
    throw std::runtime_error(fmt::format("{}: {}", who, failure_));
  }
}

void WorkerLoop::run_once() {
  commands_.drain([this](const WorkerCommand& command) { execute(command); });
  events_.store(events_.load(std::memory_order_relaxed) + clock_.poll(), std::memory_order_relaxed);
  hook_.poll_ports(clock_.last_read(), clock_);
  while (!unsent_.empty() && reports_.try_push(unsent_.front())) unsent_.pop_front();
  if (++passes_ % kPassesPerPublish == 0) publish();
}

void WorkerLoop::execute(const WorkerCommand& command) {
  if (command.kind == WorkerCommand::Kind::kConnect) {
    const nic::WireRoute& route = command.route;
    hook_.on_connect(command.connection, route);
    worker_.open({route.requester.port, route.requester.queue, route.requester.qpn},
                 {route.responder.port, route.responder.queue, route.responder.qpn},
                 command.udp_source_port);
    connections_open_.store(command.connection + 1, std::memory_order_release);
    return;
  }
  worker_.post(command.requester_qpn, command.bytes, command.tags);
}

void WorkerLoop::publish() {
  if (!ports_.empty()) {
    paced_rates_.assign(slot_.size(), 0.0);
    worker_.add_paced_rates(paced_rates_);
  }
  for (size_t i = 0; i < ports_.size(); ++i) {
    const uint32_t port = ports_[i];
    const transport::TransportPortCounters& transport = worker_.counters(port);
    PortSample sample;
    hook_.device_counters(port, sample.counters, sample.rx_handed_over);
    set_transport_counters(sample.counters, transport);
    sample.paced_rate_bps = static_cast<uint64_t>(paced_rates_[port]);
    published_[i].publish(sample);
  }
}

void WorkerLoop::report(const WorkerReport& report) {
  // Order matters (a message's delivery before its completion): once one report waits, all do.
  if (!unsent_.empty() || !reports_.try_push(report)) unsent_.push_back(report);
}

void WorkerLoop::on_flow_delivered(const transport::FlowRecord& record) {
  WorkerReport delivered;
  delivered.kind = WorkerReport::Kind::kDelivered;
  delivered.record = record;
  report(delivered);
}

void WorkerLoop::on_flow_finished(const transport::FlowRecord& record) {
  WorkerReport finished;
  finished.kind = WorkerReport::Kind::kFinished;
  finished.record = record;
  report(finished);
}

void WorkerLoop::on_delivered_to_responder(uint32_t requester_qpn, clock::Nanos now,
                                           uint32_t ecn_marks, uint32_t immediate) {
  WorkerReport delivered;
  delivered.kind = WorkerReport::Kind::kRemoteDelivery;
  delivered.requester_qpn = requester_qpn;
  delivered.at = now;
  delivered.ecn_marks = ecn_marks;
  delivered.immediate = immediate;
  report(delivered);
}

}  // namespace etwire::dataplane

#include "dataplane/loopback/twin_queue_sampler.h"

#include <utility>

#include "twin/switch/egress_port.h"

namespace etwire::dataplane {

TwinQueueSampler::TwinQueueSampler(const twin::FabricTwin& twin, QueueSink& sink,
                                   clock::Nanos interval, std::vector<bool> sampled)
    : twin_(twin),
      sink_(sink),
      interval_(interval),
      next_(interval),
      last_tx_bytes_(twin.layout().switch_ports(), 0),
      utilization_(twin.layout().switch_ports(), 0.0) {
  for (uint32_t port = 0; port < twin.layout().switch_ports(); ++port) {
    if (sampled.empty() || sampled.at(port)) ports_.push_back(port);
  }
}

void TwinQueueSampler::take_until(clock::Nanos until) {
  while (next_ < until) {
    take(next_);
    next_ += interval_;
    // Nothing moves until `until`: the samples between would all be of empty queues on idle
    // links, which queues.csv leaves out.
    if (quiet_ && next_ < until) next_ += (until - next_) / interval_ * interval_;
  }
}

void TwinQueueSampler::take(clock::Nanos at) {
  const twin::FabricLayout& layout = twin_.layout();
  for (const uint32_t port : ports_) {
    const uint64_t tx = twin_.switch_port_counters(port).tx_bytes;
    const uint64_t speed = layout.cable(layout.switch_port(port).cable).speed_bps;
    const double carried = static_cast<double>(speed) * static_cast<double>(interval_) / 8e9;
    utilization_[port] = static_cast<double>(tx - last_tx_bytes_[port]) / carried;
    last_tx_bytes_[port] = tx;
  }
  quiet_ = true;
  for (const uint32_t port : ports_) {
    const double utilization = utilization_[port];
    for (uint8_t priority = 0; priority < twin::kPriorities; ++priority) {
      const twin::QueueSample q = twin_.queue(port, priority);
      if (q.depth_bytes == 0 && utilization == 0) continue;  // an empty queue on an idle link
      quiet_ = false;
      // A link carries all its priorities: the utilization repeats on each of its rows.
      if (q.enqueued_packets > 0 || q.depth_bytes > 0) {
        sink_.append({at, q, utilization}, layout.switch_port(port).name);
      }
    }
  }
}

}  // namespace etwire::dataplane

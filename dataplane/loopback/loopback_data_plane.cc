#include "dataplane/loopback/loopback_data_plane.h"

#include <stdexcept>

#include "nic/port_frame_format.h"
#include "twin/layout/configured_layout.h"

namespace etwire::dataplane {

LoopbackDataPlane::LoopbackDataPlane(const config::RunConfig& config,
                                     transport::FlowObserver& observer, uint32_t workers,
                                     const twin::FabricLayout* layout)
    : TwinDataPlane(config, observer), rig_(config, specs(), layout) {
  if (workers == 0) throw std::invalid_argument("loopback data plane: no workers");
  for (uint32_t w = 0; w < workers; ++w) {
    workers_.push_back(std::make_unique<Worker>(config.transport, rig_.clock(), join()));
  }
  for (size_t p = 0; p < specs().size(); ++p) {
    const config::PortConfig& port = twin::host_port_settings(config, p);
    const auto run_port = static_cast<uint32_t>(p);
    worker_of(run_port).add_port(rig_.twin().port(p), run_port, 0, port.qos,
                                 nic::frame_format(config, port));
  }
  capture_if_recorded(config, [this](twin::Endpoint endpoint, twin::FrameTap* tap) {
    rig_.twin().set_frame_tap(endpoint, tap);
  });
}

void LoopbackDataPlane::post(transport::ConnectionId connection, uint64_t bytes,
                             const transport::FlowTags& tags) {
  join().posted(connection.requester, bytes, tags, rig_.clock().now());
  worker_of(join().sending_port(connection.requester)).post(connection.requester, bytes, tags);
}

bool LoopbackDataPlane::append_qp_stats(std::vector<transport::QpStats>& out) {
  for (auto& worker : workers_) worker->append_qp_stats(out, rig_.clock().now());
  return true;
}

LoopbackDataPlane::~LoopbackDataPlane() = default;

void LoopbackDataPlane::poll() {
  clock::VirtualClock& clock = rig_.clock();
  if (sampler_ && !clock.idle()) sampler_->take_until(clock.next_event_time());
  clock.poll();
}

void LoopbackDataPlane::sample_queues(QueueSink& sink, clock::Nanos interval_ns) {
  if (interval_ns <= 0) throw std::invalid_argument("queue samples need an interval above 0");
  sampler_ = std::make_unique<TwinQueueSampler>(rig_.twin(), sink, interval_ns);
}

DataPlaneFactory loopback_data_plane_factory(uint32_t workers, const twin::FabricLayout* layout) {
  return [workers, layout](const config::RunConfig& config, transport::FlowObserver& observer) {
    return std::make_unique<LoopbackDataPlane>(config, observer, workers, layout);
  };
}

}  // namespace etwire::dataplane

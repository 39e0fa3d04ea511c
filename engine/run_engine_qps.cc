// The QP records of a run's results: the data plane's QP halves, each joined with the connection
// the engine opened it for. A half is known by its role, its port and its run number (what the
// data plane opened it with), and shown by its wire number, its port's own.
#include <map>
#include <tuple>

#include "engine/run_engine.h"

namespace etwire::engine {

void RunEngine::collect_qp_records() {
  results_.qps.clear();
  std::vector<transport::QpStats> halves;
  results_.qps_counted = data_plane_->append_qp_stats(halves);
  if (!results_.qps_counted) return;

  struct Owner {
    uint32_t job;
    int32_t rank;
    int32_t peer;
    uint32_t qp_index;
  };
  using HalfKey = std::tuple<transport::QpRole, uint32_t, uint32_t>;  // role, port, QP number
  std::map<HalfKey, Owner> owners;
  for (const auto& [key, id] : posting_.connections()) {
    const auto& [job, src, dst, qp] = key;
    // The data plane's numbers for the two halves: the ones its transport holds them by.
    const control::JobPlacement& placement = *jobs_[job].placement;
    owners[HalfKey{transport::QpRole::kRequester, static_cast<uint32_t>(placement.port(src)),
                   id.requester}] = {job, src, dst, qp};
    owners[HalfKey{transport::QpRole::kResponder, static_cast<uint32_t>(placement.port(dst)),
                   id.responder}] = {job, dst, src, qp};
  }

  results_.qps.reserve(halves.size());
  for (const transport::QpStats& half : halves) {
    QpRecord& record = results_.qps.emplace_back();
    record.stats = half;
    const auto owner = owners.find(HalfKey{half.role, half.port, half.qpn});
    // Shown by their wire numbers, as records and captures show them.
    record.stats.qpn = loaded_.wire_qpn(half.port, half.qpn);
    record.stats.remote_qpn = loaded_.wire_qpn(half.remote_port, half.remote_qpn);
    if (owner == owners.end()) continue;
    record.known = true;
    record.job = owner->second.job;
    record.rank = owner->second.rank;
    record.peer = owner->second.peer;
    record.qp_index = owner->second.qp_index;
  }
}

}  // namespace etwire::engine

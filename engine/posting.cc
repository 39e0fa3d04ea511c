#include "engine/posting.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "engine/engine_event.h"
#include "engine/flow_user.h"
#include "engine/wire_tag.h"

namespace etwire::engine {

Posting::Posting(const control::RunPlan& plan, dataplane::DataPlane& data_plane,
                 clock::EventHandler& events, SplitRun& split)
    : plan_(plan),
      config_(plan.config),
      data_plane_(data_plane),
      clock_(data_plane.scheduler()),
      events_(events),
      split_(split) {
  for (const auto& placement : plan.placements) {
    const auto ranks = placement ? static_cast<size_t>(placement->world_size) : 0;
    local_send_free_.emplace_back(ranks, 0);
    local_receive_free_.emplace_back(ranks, 0);
  }
}

void Posting::send(CollectiveInstance& instance, uint32_t position, const SendRequest& request) {
  const uint32_t job = instance.key().job;
  const int32_t src = instance.ranks()[position];
  const int32_t dst = instance.ranks()[request.peer];
  CollectiveRecord& record = instance.record();
  if (plan_.placements[job]->same_host(src, dst)) {
    // The host's local interconnect: each rank's port sends one transfer at a time and receives
    // one at a time, at the per-rank bandwidth, in posting order; a transfer starts once both
    // its ends are free and arrives the interconnect's latency after its last byte left.
    const config::HostsConfig& hosts = config_.mapping.jobs[job].hosts;
    const auto transfer_ns = static_cast<clock::Nanos>(
        std::ceil(static_cast<double>(request.bytes) * 8e9 /
                  static_cast<double>(std::max<uint64_t>(hosts.bandwidth_bps, 1))));
    clock::Nanos& send_free = local_send_free_[job][static_cast<size_t>(src)];
    clock::Nanos& receive_free = local_receive_free_[job][static_cast<size_t>(dst)];
    const clock::Nanos sent = std::max({clock_.now(), send_free, receive_free}) + transfer_ns;
    send_free = sent;
    receive_free = sent;
    uint32_t slot;
    if (free_local_transfers_.empty()) {
      slot = static_cast<uint32_t>(local_transfers_.size());
      local_transfers_.emplace_back();
    } else {
      slot = free_local_transfers_.back();
      free_local_transfers_.pop_back();
    }
    local_transfers_[slot] = {record.instance, position, request.peer, request};
    clock_.run_at(sent + static_cast<clock::Nanos>(hosts.latency_ns), &events_,
                  engine_event::tag(engine_event::kLocalDone, slot));
    return;
  }
  const transport::ConnectionId connection_id = connection(job, src, dst, request.qp);
  const uint64_t max_message = std::max<uint64_t>(config_.collectives.max_message_bytes, 1);
  // A receiver in another process knows the message by its immediate.
  const uint32_t wire_hash = instance.here(request.peer) ? 0 : instance.wire_hash();
  uint64_t remaining = request.bytes;
  do {
    const uint64_t piece = std::min(remaining, max_message);
    remaining -= piece;
    transport::FlowTags tags;
    tags.src_rank = src;
    tags.dst_rank = dst;
    tags.collective = record.instance;
    tags.chunk = request.chunk;
    tags.qp_index = request.qp;
    tags.user = pack_user(request.op, request.index, remaining == 0);
    if (wire_hash != 0) tags.wire_tag = wire_tag(wire_hash, remaining == 0);
    ++record.flows;
    data_plane_.post(connection_id, piece, tags);
  } while (remaining > 0);
  record.wire_bytes += request.bytes;
}

transport::ConnectionId Posting::connection(uint32_t job, int32_t src, int32_t dst, uint16_t qp) {
  const ConnectionKey key{job, src, dst, qp};
  auto it = connections_.find(key);
  if (it != connections_.end()) return it->second;
  const control::AddressPlan& addresses = *plan_.addresses;
  const control::JobPlacement& placement = *plan_.placements[job];
  const auto end = [&](int32_t rank, int32_t peer) {
    const control::RankEndpoint& endpoint = addresses.endpoint(job, rank);
    return dataplane::WireEndpoint{static_cast<uint32_t>(placement.port(rank)), endpoint.mac,
                                   endpoint.ipv4, endpoint.ipv6,
                                   addresses.qpn(job, rank, peer, qp)};
  };
  const dataplane::WireEndpoint requester = end(src, dst);
  const dataplane::WireEndpoint responder = end(dst, src);
  const transport::ConnectionId id =
      data_plane_.connect({requester, responder, addresses.udp_source_port(requester.qpn)});
  connections_.emplace(key, id);
  split_.opened(job, src, dst, qp, requester.qpn);
  return id;
}

void Posting::open_planned_connections() {
  // A collective the plan could not build (RunPlan::traffic_problems) stops the run when joined.
  if (!plan_.traffic) {
    throw std::invalid_argument(fmt::format(
        "{}: a run on the wall clock or split between emulator processes opens the plan's "
        "connections first, and the plan has no traffic planned",
        config_.source_file));
  }
  const control::TrafficPlan& traffic = *plan_.traffic;
  for (size_t j = 0; j < traffic.connections.size(); ++j) {
    const auto job = static_cast<uint32_t>(j);
    for (const control::PlannedConnection& planned : traffic.connections[j]) {
      if (split_.rank_here(job, planned.src) || split_.rank_here(job, planned.dst)) {
        connection(job, planned.src, planned.dst, planned.qp);
      }
    }
  }
}

void Posting::queue(const FlowEvent& event) {
  events_queued_.push_back(event);
  if (!drain_scheduled_) {
    drain_scheduled_ = true;
    clock_.run_at(clock_.now(), &events_, engine_event::tag(engine_event::kDrain, 0));
  }
}

LocalTransfer Posting::finish_local_transfer(uint32_t slot) {
  const LocalTransfer transfer = local_transfers_[slot];
  free_local_transfers_.push_back(slot);
  return transfer;
}

}  // namespace etwire::engine

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
      split_(split),
      next_unplanned_qpn_(plan.qp_numbers ? plan.qp_numbers->end()
                                          : plan.config.mapping.addressing.qpn_base) {
  for (const auto& placement : plan.placements) {
    const auto ranks = placement ? static_cast<size_t>(placement->world_size) : 0;
    local_send_free_.emplace_back(ranks, 0);
    local_receive_free_.emplace_back(ranks, 0);
    last_window_.emplace_back(ranks);
  }
}

void Posting::send(PostingLane& lane, CollectiveInstance& instance, uint32_t position,
                   const SendRequest& request) {
  const uint32_t job = instance.key().job;
  const int32_t src = instance.participant_rank(position);
  const int32_t dst = instance.participant_rank(request.peer);
  CollectiveRecord& record = instance.record();
  if (plan_.placements[job]->same_host(src, dst)) {
    send_local(instance, position, request);
    return;
  }
  const uint32_t window_index = window(lane, job, src, dst, request.qp);
  const config::ProtocolConfig& protocol = config_.collectives.protocol;
  const config::Protocol kind = record.protocol;
  // Each QP of a connection carries its share of every slice (NCCL splits a slice over the
  // connection's QPs), in whole lines of the protocol.
  const uint64_t line_data = config::protocol_line(kind).data;
  const uint64_t qps = std::max<uint32_t>(config_.collectives.qps_per_peer, 1);
  const uint64_t slice = protocol.message_data_bytes(kind);
  const uint64_t max_message =
      std::max((slice / qps + line_data - 1) / line_data, uint64_t{1}) * line_data;
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
    const uint64_t wire_bytes = config::protocol_wire_bytes(kind, piece);
    if (!lane.keeps()) {
      ++record.flows;
      record.wire_bytes += wire_bytes;
    } else if (!lane.counts_.empty() && lane.counts_.back().record == &record) {
      ++lane.counts_.back().flows;
      lane.counts_.back().wire_bytes += wire_bytes;
    } else {
      lane.counts_.push_back({&record, 1, wire_bytes});
    }
    SliceWindow& slices = windows_[window_index];
    if (slices.waiting.empty() &&
        (slices.in_flight == 0 || slices.in_flight + wire_bytes <= protocol.buffer(kind))) {
      slices.in_flight += wire_bytes;
      post(lane, window_index, wire_bytes, tags);
    } else {
      slices.waiting.push_back({wire_bytes, kind, tags});
    }
  } while (remaining > 0);
}

void Posting::send_local(CollectiveInstance& instance, uint32_t position,
                         const SendRequest& request) {
  const uint32_t job = instance.key().job;
  const int32_t src = instance.ranks()[position];
  const int32_t dst = instance.ranks()[request.peer];
  const CollectiveRecord& record = instance.record();
  // The host's local interconnect: each rank's port sends one transfer at a time and receives
  // one at a time, at the per-rank bandwidth, in posting order; a transfer starts once both
  // its ends are free and arrives the interconnect's latency after its last byte left.
  const config::HostsConfig& hosts = config_.mapping.jobs[job].hosts;
  const auto transfer_ns = static_cast<clock::Nanos>(
      std::ceil(static_cast<double>(config::protocol_wire_bytes(record.protocol, request.bytes)) *
                8e9 / static_cast<double>(std::max<uint64_t>(hosts.bandwidth_bps, 1))));
  clock::Nanos& send_free = local_send_free_[job][static_cast<size_t>(src)];
  clock::Nanos& receive_free = local_receive_free_[job][static_cast<size_t>(dst)];
  const clock::Nanos sent = std::max({clock_.now(), send_free, receive_free}) + transfer_ns;
  send_free = sent;
  receive_free = sent;
  const uint32_t slot = local_transfers_.put({record.instance, position, request.peer, request});
  clock_.run_at(sent + static_cast<clock::Nanos>(hosts.latency_ns), &events_,
                engine_event::tag(engine_event::kLocalDone, slot));
}

size_t Posting::ConnectionKeyHash::operator()(const ConnectionKey& key) const {
  // The four fields in two words, mixed (splitmix64's finalizer) so that neighbouring ranks
  // spread over the buckets.
  const auto [job, src, dst, qp] = key;
  uint64_t h = (uint64_t{job} << 32 | static_cast<uint32_t>(src)) * 0x9E3779B97F4A7C15ull;
  h ^= (uint64_t{static_cast<uint32_t>(dst)} << 16 | qp) + (h >> 29);
  h = (h ^ (h >> 30)) * 0xBF58476D1CE4E5B9ull;
  h = (h ^ (h >> 27)) * 0x94D049BB133111EBull;
  return static_cast<size_t>(h ^ (h >> 31));
}

void Posting::message_finished(PostingLane& lane, uint32_t job, int32_t src, int32_t dst,
                               uint16_t qp, uint64_t wire_bytes, Turn turn) {
  const uint32_t index = open_window(job, src, dst, qp);
  if (index == kNoWindow) return;
  SliceWindow& slices = windows_[index];
  slices.in_flight -= std::min(slices.in_flight, wire_bytes);
  if (!slices.waiting.empty()) {
    lane.credited_.push_back({index, turn});
    if (&lane == &own_lane_) schedule_drain();
  }
}

void Posting::post_credited(PostingLane& lane) {
  const config::ProtocolConfig& protocol = config_.collectives.protocol;
  std::vector<PostingLane::Credit>& credited = lane.credited_;
  // By index: a post that fails at once finishes its flow inside post(), which credits again.
  for (size_t i = 0; i < credited.size(); ++i) {
    lane.turn_ = credited[i].turn;
    SliceWindow& slices = windows_[credited[i].window];
    // Each message fits in the buffer of its own protocol (`auto` may mix them on a connection).
    while (!slices.waiting.empty() &&
           (slices.in_flight == 0 || slices.in_flight + slices.waiting.front().wire_bytes <=
                                         protocol.buffer(slices.waiting.front().protocol))) {
      const WaitingMessage message = slices.waiting.pop_front();
      slices.in_flight += message.wire_bytes;
      post(lane, credited[i].window, message.wire_bytes, message.tags);
    }
  }
  credited.clear();
}

void Posting::post(PostingLane& lane, uint32_t window, uint64_t wire_bytes,
                   const transport::FlowTags& tags) {
  if (!lane.keeps()) {
    data_plane_.post(windows_[window].connection, wire_bytes, tags);
    return;
  }
  lane.posts_.push_back({lane.now_, lane.phase_, false, lane.turn_, window, wire_bytes, tags});
}

void Posting::settle_lanes(std::vector<PostingLane>& lanes) {
  const clock::Nanos now = clock_.now();
  for (;;) {
    // The lanes' posts are each in the engine's order: the earliest of their next ones.
    PostingLane* earliest = nullptr;
    for (PostingLane& lane : lanes) {
      const size_t next = lane.next_post();
      if (next == lane.posts().size() || lane.posts()[next].at != now) continue;
      if (earliest == nullptr ||
          lane.posts()[next].key() < earliest->posts()[earliest->next_post()].key()) {
        earliest = &lane;
      }
    }
    if (earliest == nullptr) break;
    const PostingLane::Post& kept = earliest->posts()[earliest->next_post()++];
    SliceWindow& slices = windows_[kept.window];
    if (!slices.connected) {
      const auto [job, src, dst, qp] = slices.key;
      slices.connection = connection(job, src, dst, qp);
      slices.connected = true;
    }
    if (!kept.opens_only) data_plane_.post(slices.connection, kept.wire_bytes, kept.tags);
  }
  for (PostingLane& lane : lanes) {
    for (const PostingLane::Count& count : lane.counts()) {
      count.record->flows += count.flows;
      count.record->wire_bytes += count.wire_bytes;
    }
    lane.counts().clear();
  }
}

Posting::LastWindow* Posting::last_window(uint32_t job, int32_t src) {
  // A switch's aggregator (CollNet) sends as a rank past the world's: it has no entry.
  std::vector<LastWindow>& ranks = last_window_[job];
  return static_cast<size_t>(src) < ranks.size() ? &ranks[static_cast<size_t>(src)] : nullptr;
}

uint32_t Posting::open_window(uint32_t job, int32_t src, int32_t dst, uint16_t qp) {
  LastWindow* last = last_window(job, src);
  if (last != nullptr && last->window != kNoWindow && last->dst == dst && last->qp == qp) {
    return last->window;
  }
  const auto it = window_of_connection_.find({job, src, dst, qp});
  if (it == window_of_connection_.end()) return kNoWindow;
  if (last != nullptr) *last = {dst, qp, it->second};
  return it->second;
}

uint32_t Posting::window(PostingLane& lane, uint32_t job, int32_t src, int32_t dst, uint16_t qp) {
  const uint32_t open = open_window(job, src, dst, qp);
  if (open != kNoWindow) {
    SliceWindow& slices = windows_[open];
    if (!slices.connected) {
      if (lane.keeps()) {
        // Opened when the engine's thread settles the lane, in the engine's order of openings.
        lane.posts_.push_back({lane.now_, lane.phase_, true, lane.turn_, open, 0, {}});
      } else {
        slices.connection = connection(job, src, dst, qp);
        slices.connected = true;
      }
    }
    return open;
  }
  if (lane.keeps()) {
    throw std::logic_error(fmt::format(
        "rank {} sends to rank {} on QP {} (job {}) over a connection the traffic plan did not "
        "foresee, in a window whose reports run on the partitions' threads",
        src, dst, qp, job));
  }
  const auto index = static_cast<uint32_t>(windows_.size());
  const ConnectionKey key{job, src, dst, qp};
  windows_.push_back({key, true, connection(job, src, dst, qp), 0, {}});
  window_of_connection_.emplace(key, index);
  if (LastWindow* last = last_window(job, src)) *last = {dst, qp, index};
  return index;
}

bool Posting::make_planned_windows() {
  if (!plan_.traffic ||
      plan_.traffic_problems.error_count() + plan_.traffic_problems.warning_count() > 0) {
    return false;
  }
  const control::TrafficPlan& traffic = *plan_.traffic;
  for (size_t j = 0; j < traffic.connections.size(); ++j) {
    const auto job = static_cast<uint32_t>(j);
    for (const control::PlannedConnection& planned : traffic.connections[j]) {
      const ConnectionKey key{job, planned.src, planned.dst, planned.qp};
      const auto index = static_cast<uint32_t>(windows_.size());
      if (window_of_connection_.emplace(key, index).second) {
        windows_.push_back({key, false, {}, 0, {}});
      }
    }
  }
  return true;
}

transport::ConnectionId Posting::connection(uint32_t job, int32_t src, int32_t dst, uint16_t qp) {
  const ConnectionKey key{job, src, dst, qp};
  auto it = connections_.find(key);
  if (it != connections_.end()) return it->second;
  const control::AddressPlan& addresses = *plan_.addresses;
  const control::JobPlacement& placement = *plan_.placements[job];
  const auto end = [&](int32_t rank, int32_t peer) {
    const control::RankEndpoint& endpoint = addresses.endpoint(job, rank);
    const auto port = static_cast<uint32_t>(placement.port(rank));
    const uint32_t number = qpn(job, rank, peer, qp);
    return dataplane::WireEndpoint{port,          endpoint.mac, endpoint.ipv4,
                                   endpoint.ipv6, number,       plan_.wire_qpn(port, number)};
  };
  const dataplane::WireEndpoint requester = end(src, dst);
  const dataplane::WireEndpoint responder = end(dst, src);
  const transport::ConnectionId id =
      data_plane_.connect({requester, responder, addresses.udp_source_port(requester.qpn)});
  connections_.emplace(key, id);
  split_.opened(job, src, dst, qp, requester.qpn);
  return id;
}

uint32_t Posting::qpn(uint32_t job, int32_t rank, int32_t peer, uint16_t qp) {
  if (plan_.qp_numbers) {
    if (const auto planned = plan_.qp_numbers->find(job, rank, peer, qp)) return *planned;
  }
  const ConnectionKey key{job, rank, peer, qp};
  const auto it = unplanned_qpns_.find(key);
  if (it != unplanned_qpns_.end()) return it->second;
  if (next_unplanned_qpn_ >= control::kQpnLimit) {
    throw std::runtime_error(fmt::format(
        "{}: rank {}'s QP {} towards rank {} (job {}) needs a QP number past the 24-bit limit",
        config_.source_file, rank, qp, peer, job));
  }
  const auto number = static_cast<uint32_t>(next_unplanned_qpn_++);
  unplanned_qpns_.emplace(key, number);
  return number;
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

void Posting::queue(PostingLane& lane, const FlowEvent& event, Turn turn) {
  lane.events_.push_back({event, turn});
  if (&lane == &own_lane_) schedule_drain();
}

void Posting::schedule_drain() {
  if (!drain_scheduled_) {
    drain_scheduled_ = true;
    clock_.run_at(clock_.now(), &events_, engine_event::tag(engine_event::kDrain, 0));
  }
}

LocalTransfer Posting::finish_local_transfer(uint32_t slot) {
  return local_transfers_.take(slot);
}

}  // namespace etwire::engine

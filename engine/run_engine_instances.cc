// The run engine's collective instances: joining them, moving their bytes over the transport (or
// a host's local interconnect), and hearing back from the transport.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "control/check/trace_facts.h"
#include "engine/engine_event.h"
#include "engine/run_engine.h"
#include "engine/wire_tag.h"

namespace etwire::engine {

namespace {

// FlowTags::user: the sender's chunk operation (bits 0-31), its position on the channel (bits
// 32-62) and whether the flow is the last message of the chunk operation (bit 63).
uint64_t pack_user(uint32_t op, uint32_t index, bool last) {
  return uint64_t{op} | (uint64_t{index & 0x7FFFFFFFu} << 32) | (uint64_t{last} << 63);
}
uint32_t user_op(uint64_t user) {
  return static_cast<uint32_t>(user);
}
uint32_t user_index(uint64_t user) {
  return static_cast<uint32_t>(user >> 32) & 0x7FFFFFFFu;
}
bool user_last(uint64_t user) {
  return (user >> 63) != 0;
}

}  // namespace

class RunEngine::MemberContext final : public MemberActions {
 public:
  MemberContext(RunEngine& engine, CollectiveInstance& instance, uint32_t position)
      : engine_(engine), instance_(instance), position_(position) {}
  // Collective members send once their peer is there (as NCCL's connections wait for the
  // receiver's buffer); point-to-point sends are eager: a SEND need not wait for its RECV, whose
  // node may depend on the sender's own progress (MSCCL-style send/recv chains do). A peer in
  // another emulator process is not seen arriving: sends to it are eager too.
  bool peer_ready(uint32_t peer) const override {
    return instance_.key().group == kPointToPointGroup || instance_.member(peer).arrived ||
           !instance_.here(peer);
  }
  void send(const SendRequest& request) override { engine_.send(instance_, position_, request); }

 private:
  RunEngine& engine_;
  CollectiveInstance& instance_;
  uint32_t position_;
};

void RunEngine::join_collective(uint32_t runtime, feeder::IssuedNode issued) {
  RankRuntime& rt = runtimes_[runtime];
  Job& job = jobs_[rt.job()];
  const trace::TraceNode& node = *issued.node;
  const bool named = node.comm.pg_name.has_value();
  auto key = std::make_pair(named, node.comm.pg_name.value_or(""));
  auto found = job.groups.find(key);
  if (found == job.groups.end()) {
    const std::string& file = job.traces->files()[static_cast<size_t>(rt.rank())].path;
    found = job.groups.emplace(key, job.traces->node_group(node, file)).first;
  }
  const trace::NodeGroup& group = found->second;
  collectives::CollectiveSpec spec = job.base_spec;
  spec.collective = node.comm.coll_type;
  spec.ranks = group.members;
  spec.bytes = node.comm.size.value_or(0);
  spec.algorithm = config_.collectives.algorithm_for(*node.comm.coll_type);
  InstanceKey instance_key{rt.job(), group.key, rt.next_collective_sequence(group.key), 0, 0, 0};
  join(runtime, issued, instance_key, spec, group.key);
}

void RunEngine::join_point_to_point(uint32_t runtime, feeder::IssuedNode issued) {
  RankRuntime& rt = runtimes_[runtime];
  Job& job = jobs_[rt.job()];
  const trace::TraceNode& node = *issued.node;
  const bool is_send = node.type == trace::NodeType::kCommSend;
  // A missing end is the rank's own (trace_facts.h applies the same rule).
  const int32_t src = is_send ? rt.rank() : node.comm.src.value_or(rt.rank());
  const int32_t dst = is_send ? node.comm.dst.value_or(rt.rank()) : rt.rank();
  const int32_t tag = node.comm.tag.value_or(0);
  if (src == dst) {  // to itself: nothing crosses a wire or a host
    completions_.push_back({runtime, issued, NodeActivity::kNone});
    return;
  }
  const uint64_t sequence =
      is_send ? rt.next_send_sequence(dst, tag) : rt.next_recv_sequence(src, tag);
  collectives::CollectiveSpec spec = job.base_spec;
  spec.collective = std::nullopt;
  spec.ranks = {src, dst};
  spec.bytes = *node.comm.size;
  InstanceKey key{rt.job(), kPointToPointGroup, sequence, src, dst, tag};
  join(runtime, issued, key, spec, int64_t{src} * job.world_size + dst);
}

const collectives::ProgramGenerator& RunEngine::generator(uint32_t job, int64_t group,
                                                          const collectives::CollectiveSpec& spec) {
  const int kind = spec.collective ? static_cast<int>(*spec.collective) : -1;
  auto key = std::make_tuple(job, kind, group, spec.bytes);
  auto it = generators_.find(key);
  if (it == generators_.end()) {
    it = generators_.emplace(key, std::make_unique<collectives::ProgramGenerator>(spec)).first;
  }
  return *it->second;
}

void RunEngine::join(uint32_t runtime, feeder::IssuedNode issued, const InstanceKey& key,
                     const collectives::CollectiveSpec& spec, int64_t generator_group) {
  RankRuntime& rt = runtimes_[runtime];
  const Job& job = jobs_[rt.job()];
  const trace::TraceNode& node = *issued.node;
  const std::string& file = job.traces->files()[static_cast<size_t>(rt.rank())].path;
  auto it = instances_.find(key);
  if (it == instances_.end()) {
    const collectives::ProgramGenerator* made = nullptr;
    try {
      made = &generator(rt.job(), generator_group, spec);
    } catch (const collectives::SpecError& e) {
      stop_stuck(fmt::format("{}: record {} (node id {}): cannot build {} of {} bytes: {}", file,
                             node.record_index, node.id, kind_label(spec.collective), spec.bytes,
                             e.what()));
      return;
    }
    CollectiveRecord record;
    record.instance = next_instance_id_++;
    record.job = rt.job();
    record.kind = spec.collective;
    record.algorithm = made->spec().algorithm;
    record.group = key.group;
    record.sequence = key.sequence;
    record.tag = key.tag;
    record.trace_bytes = spec.bytes;
    record.algbw_bytes = made->spec().layout.full_bytes();
    record.iteration = rt.iteration();
    record.warmup = rt.iteration() < job.config->warmup_iterations;
    record.src = key.src;
    record.dst = key.dst;
    std::vector<uint8_t> here;
    if (split_) {
      for (int32_t member : made->spec().ranks) here.push_back(rank_here(rt.job(), member) ? 1 : 0);
    }
    auto instance = std::make_unique<CollectiveInstance>(key, record, *made, std::move(here));
    instance_by_id_.emplace(record.instance, instance.get());
    it = instances_.emplace(key, std::move(instance)).first;
    if (split_ && !register_wire_hash(*it->second)) return;
  } else {
    // Every member must agree on what the n-th collective of the group is.
    const CollectiveRecord& first = it->second->record();
    if (first.kind != spec.collective || first.trace_bytes != spec.bytes) {
      const CollectiveInstance& other = *it->second;
      uint32_t arrived = 0;
      while (!other.member(arrived).arrived) ++arrived;
      stop_stuck(fmt::format(
          "mismatched traces in job \"{}\": {}: record {} (node id {}) issues {} of {} bytes as "
          "collective #{} of {}, but rank {} issued {} of {} bytes there",
          job.config->name, file, node.record_index, node.id, kind_label(spec.collective),
          spec.bytes, key.sequence,
          key.group == kPointToPointGroup
              ? fmt::format("the sends from rank {} to rank {} with tag {}", key.src, key.dst,
                            key.tag)
              : control::group_label(key.group),
          other.ranks()[arrived], kind_label(first.kind), first.trace_bytes));
      return;
    }
  }
  CollectiveInstance& instance = *it->second;
  const uint32_t position = key.group == kPointToPointGroup
                                ? (node.type == trace::NodeType::kCommSend ? 0u : 1u)
                                : instance.position_of(rt.rank());
  if (position >= instance.size() || instance.member(position).arrived) {
    stop_stuck(fmt::format(
        "{}: record {} (node id {}): rank {} joins collective #{} of {} {}", file,
        node.record_index, node.id, rt.rank(), key.sequence, control::group_label(key.group),
        position >= instance.size() ? "but is not a member of the group" : "twice"));
    return;
  }
  instance.arrive(position, runtime, issued, clock_.now());
  rt.node_started(NodeActivity::kCommunication, clock_.now());
  rt.joined().push_back(key);
  MemberContext context(*this, instance, position);
  InstanceMember& member = instance.member(position);
  member.execution.start(context);
  for (const EarlyData& early : member.early) {
    deliver(instance, position, early.peer, early.qp, early.index);
  }
  member.early.clear();
  member_progressed(instance, position);
  // Members already there may now send to the newcomer.
  for (uint32_t p = 0; p < instance.size(); ++p) {
    InstanceMember& other = instance.member(p);
    if (p == position || !other.arrived || other.done) continue;
    MemberContext peer(*this, instance, p);
    other.execution.peer_arrived(position, peer);
    member_progressed(instance, p);
  }
}

void RunEngine::send(CollectiveInstance& instance, uint32_t position, const SendRequest& request) {
  const int32_t src = instance.ranks()[position];
  const int32_t dst = instance.ranks()[request.peer];
  const Job& job = jobs_[instance.key().job];
  CollectiveRecord& record = instance.record();
  if (job.placement->same_host(src, dst)) {
    // The host's local interconnect: a fixed latency plus the bytes at its bandwidth, with no
    // contention modelled (docs/architecture.md).
    const config::HostsConfig& hosts = config_.mapping.jobs[instance.key().job].hosts;
    const auto transfer_ns = static_cast<clock::Nanos>(
        std::ceil(static_cast<double>(request.bytes) * 8e9 /
                  static_cast<double>(std::max<uint64_t>(hosts.bandwidth_bps, 1))));
    uint32_t slot;
    if (free_local_transfers_.empty()) {
      slot = static_cast<uint32_t>(local_transfers_.size());
      local_transfers_.emplace_back();
    } else {
      slot = free_local_transfers_.back();
      free_local_transfers_.pop_back();
    }
    local_transfers_[slot] = {record.instance, position, request.peer, request};
    clock_.run_at(clock_.now() + static_cast<clock::Nanos>(hosts.latency_ns) + transfer_ns, this,
                  engine_event::tag(engine_event::kLocalDone, slot));
    return;
  }
  const transport::ConnectionId connection_id =
      connection(instance.key().job, src, dst, request.qp);
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
    data_plane_->post(connection_id, piece, tags);
  } while (remaining > 0);
  record.wire_bytes += request.bytes;
}

transport::ConnectionId RunEngine::connection(uint32_t job, int32_t src, int32_t dst, uint16_t qp) {
  auto key = std::make_tuple(job, src, dst, qp);
  auto it = connections_.find(key);
  if (it != connections_.end()) return it->second;
  const control::AddressPlan& addresses = *loaded_.addresses;
  const control::JobPlacement& placement = *jobs_[job].placement;
  const auto end = [&](int32_t rank, int32_t peer) {
    const control::RankEndpoint& endpoint = addresses.endpoint(job, rank);
    return dataplane::WireEndpoint{static_cast<uint32_t>(placement.port(rank)), endpoint.mac,
                                   endpoint.ipv4, endpoint.ipv6,
                                   addresses.qpn(job, rank, peer, qp)};
  };
  const dataplane::WireEndpoint requester = end(src, dst);
  const dataplane::WireEndpoint responder = end(dst, src);
  const transport::ConnectionId id =
      data_plane_->connect({requester, responder, addresses.udp_source_port(requester.qpn)});
  connections_.emplace(key, id);
  if (split_ && !rank_here(job, src)) remote_senders_[requester.qpn] = {job, src, dst, qp};
  return id;
}

void RunEngine::member_progressed(CollectiveInstance& instance, uint32_t position) {
  if (!instance.finish_member(position, clock_.now())) return;
  InstanceMember& member = instance.member(position);
  RankRuntime& rt = runtimes_[member.runtime];
  auto& joined = rt.joined();
  joined.erase(std::find(joined.begin(), joined.end(), instance.key()));
  completions_.push_back({member.runtime, member.node, NodeActivity::kCommunication});
  if (instance.complete()) finished_instances_.push_back(instance.record().instance);
}

void RunEngine::on_flow_delivered(const transport::FlowRecord& record) {
  last_progress_ = clock_.now();
  if (!user_last(record.tags.user)) return;
  queue_flow_event({true, record.tags.collective, record.tags.src_rank, record.tags.dst_rank,
                    record.tags.qp_index, user_op(record.tags.user), user_index(record.tags.user)});
}

void RunEngine::on_flow_finished(const transport::FlowRecord& record) {
  last_progress_ = clock_.now();
  if (options_.flows) options_.flows->append(record);
  ++results_.flows;
  auto it = instance_by_id_.find(record.tags.collective);
  const bool failed = record.status != transport::FlowStatus::kCompleted;
  if (failed) ++results_.failed_flows;
  ++results_.flows_by_status[static_cast<size_t>(record.status)];
  if (it != instance_by_id_.end()) {
    CollectiveRecord& owner = it->second->record();
    if (failed) ++owner.failed_flows;
    if (!owner.warmup) publish_flow(owner, record);
    // A message to another emulator process is delivered there: its FCT is not known here.
    if (!failed && !owner.warmup && record.delivered_at != clock::kNever) {
      const size_t kind =
          owner.kind ? static_cast<size_t>(*owner.kind) : size_t{trace::kCollectiveTypeCount};
      fct_samples_[kind].push_back(record.fct());
    }
  }
  if (!user_last(record.tags.user)) return;
  FlowEvent event{false,
                  record.tags.collective,
                  record.tags.src_rank,
                  record.tags.dst_rank,
                  record.tags.qp_index,
                  user_op(record.tags.user),
                  user_index(record.tags.user)};
  queue_flow_event(event);
  // A failed message never reaches its receiver: release the receive anyway, so the run goes on
  // and reports the failure instead of waiting for bytes that will not come. A receiver in another
  // emulator process is not here to release (its own watchdog finds it waiting).
  bool receiver_here = it == instance_by_id_.end();  // retired: handle() drops it either way
  if (!receiver_here) {
    const uint32_t receiver = it->second->position_of(record.tags.dst_rank);
    receiver_here = receiver < it->second->size() && it->second->here(receiver);
  }
  if (failed && record.delivered_at == clock::kNever && receiver_here) {
    event.delivered = true;
    queue_flow_event(event);
  }
}

void RunEngine::queue_flow_event(const FlowEvent& event) {
  flow_events_.push_back(event);
  if (!drain_scheduled_) {
    drain_scheduled_ = true;
    clock_.run_at(clock_.now(), this, engine_event::tag(engine_event::kDrain, 0));
  }
}

void RunEngine::handle(const FlowEvent& event) {
  if (event.wire_hash != 0) {
    if (!stopped_) handle_remote_delivery(event);
    return;
  }
  auto it = instance_by_id_.find(event.instance);
  if (it == instance_by_id_.end() || stopped_) return;
  CollectiveInstance& instance = *it->second;
  const uint32_t sender = instance.position_of(event.src_rank);
  const uint32_t dst = instance.position_of(event.dst_rank);
  if (event.delivered) {
    deliver(instance, dst, sender, event.qp, event.index);
  } else {
    MemberContext context(*this, instance, sender);
    instance.member(sender).execution.send_completed(event.op, context);
    member_progressed(instance, sender);
  }
}

void RunEngine::deliver(CollectiveInstance& instance, uint32_t position, uint32_t sender,
                        uint16_t qp, uint32_t index) {
  InstanceMember& member = instance.member(position);
  if (!member.arrived) {  // an eager send ahead of its RECV: kept until the RECV is issued
    member.early.push_back({sender, qp, index});
    return;
  }
  MemberContext context(*this, instance, position);
  if (!member.execution.data_arrived(sender, qp, index, context)) {
    stop_stuck(fmt::format(
        "instance {}: rank {} received message #{} from rank {} on QP {} that its step program "
        "does not expect",
        instance.record().instance, instance.ranks()[position], index, instance.ranks()[sender],
        qp));
    return;
  }
  member_progressed(instance, position);
}

void RunEngine::finish_local_transfer(uint32_t slot) {
  const LocalTransfer transfer = local_transfers_[slot];
  free_local_transfers_.push_back(slot);
  last_progress_ = clock_.now();
  auto it = instance_by_id_.find(transfer.instance);
  if (it == instance_by_id_.end()) return;
  CollectiveInstance& instance = *it->second;
  deliver(instance, transfer.dst, transfer.src, transfer.request.qp, transfer.request.index);
  MemberContext context(*this, instance, transfer.src);
  instance.member(transfer.src).execution.send_completed(transfer.request.op, context);
  member_progressed(instance, transfer.src);
}

void RunEngine::retire_finished_instances() {
  for (uint64_t id : finished_instances_) {
    auto it = instance_by_id_.find(id);
    if (it == instance_by_id_.end()) continue;
    results_.collectives.push_back(it->second->record());
    collective_members_here_.push_back(it->second->members_here());
    publish_collective(results_.collectives.back());
    const InstanceKey key = it->second->key();
    if (split_) instance_by_wire_hash_.erase((uint64_t{key.job} << 32) | it->second->wire_hash());
    instance_by_id_.erase(it);
    instances_.erase(key);
  }
  finished_instances_.clear();
}

}  // namespace etwire::engine

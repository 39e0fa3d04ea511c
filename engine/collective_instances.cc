#include "engine/collective_instances.h"

#include <fmt/format.h>

#include <algorithm>

#include "control/check/trace_facts.h"
#include "control/plan/collective_choice.h"

namespace etwire::engine {

namespace {

// "rank R", or "aggregation node K" (CollNet's, in the switch).
std::string participant_label(const CollectiveInstance& instance, uint32_t position) {
  return instance.is_aggregator(position)
             ? fmt::format("aggregation node {}", position - instance.size())
             : fmt::format("rank {}", instance.ranks()[position]);
}

}  // namespace

class CollectiveInstances::MemberContext final : public MemberActions {
 public:
  MemberContext(Posting& posting, PostingLane& lane, CollectiveInstance& instance,
                uint32_t position)
      : posting_(posting), lane_(lane), instance_(instance), position_(position) {}
  // Collective members send once their peer is there (as NCCL's connections wait for the
  // receiver's buffer); point-to-point sends are eager: a SEND need not wait for its RECV, whose
  // node may depend on the sender's own progress (MSCCL-style send/recv chains do). A peer in
  // another emulator process is not seen arriving: sends to it are eager too.
  bool peer_ready(uint32_t peer) const override {
    return instance_.key().group == kPointToPointGroup || instance_.member(peer).arrived ||
           !instance_.here(peer);
  }
  void send(const SendRequest& request) override {
    posting_.send(lane_, instance_, position_, request);
  }

 private:
  Posting& posting_;
  PostingLane& lane_;
  CollectiveInstance& instance_;
  uint32_t position_;
};

CollectiveInstances::CollectiveInstances(const config::RunConfig& config,
                                         std::vector<ReplayedJob>& jobs,
                                         std::vector<RankRuntime>& runtimes,
                                         clock::Scheduler& clock, Posting& posting,
                                         const SplitRun& split, RunControl& run)
    : config_(config),
      jobs_(jobs),
      runtimes_(runtimes),
      clock_(clock),
      posting_(posting),
      split_(split),
      run_(run) {}

CollectiveInstances::~CollectiveInstances() = default;

void CollectiveInstances::join_collective(uint32_t runtime, feeder::IssuedNode issued) {
  RankRuntime& rt = runtimes_[runtime];
  ReplayedJob& job = jobs_[rt.job()];
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
  const control::DimensionScope scope = control::dimension_scope(node.comm.involved_dim);
  // By dimension, a collective over part of its group runs over the part this rank is in
  // (validation refused the parts etwire cannot name); its instance is the part's.
  const bool by_dimension = config_.collectives.hierarchy == config::Hierarchy::kInvolvedDim;
  control::GroupPart part =
      by_dimension ? control::group_part(group.members, scope, rt.rank(), spec.ranks_per_host)
                   : control::GroupPart{group.members, 0};
  spec.ranks = std::move(part.members);
  spec.bytes = node.comm.size.value_or(0);
  control::apply_collective_choices(
      config_.collectives, scope,
      control::tuner_links(config_, rt.job(), *job.placement, spec.ranks.front()), spec);
  InstanceKey instance_key{
      rt.job(), group.key, rt.next_collective_sequence(group.key), static_cast<int32_t>(part.index),
      0,        0};
  join(runtime, issued, instance_key, spec, group.key);
}

void CollectiveInstances::join_point_to_point(uint32_t runtime, feeder::IssuedNode issued) {
  RankRuntime& rt = runtimes_[runtime];
  const ReplayedJob& job = jobs_[rt.job()];
  const trace::TraceNode& node = *issued.node;
  const bool is_send = node.type == trace::NodeType::kCommSend;
  // A missing end is the rank's own (trace_facts.h applies the same rule).
  const int32_t src = is_send ? rt.rank() : node.comm.src.value_or(rt.rank());
  const int32_t dst = is_send ? node.comm.dst.value_or(rt.rank()) : rt.rank();
  const int32_t tag = node.comm.tag.value_or(0);
  if (src == dst) {  // to itself: nothing crosses a wire or a host
    run_.complete_node(runtime, issued, NodeActivity::kNone);
    return;
  }
  const uint64_t sequence =
      is_send ? rt.next_send_sequence(dst, tag) : rt.next_recv_sequence(src, tag);
  collectives::CollectiveSpec spec = job.base_spec;
  spec.collective = std::nullopt;
  spec.ranks = {src, dst};
  spec.bytes = *node.comm.size;
  // Point-to-point under `auto`: Simple (NCCL's choice for send/recv is not modelled).
  spec.protocol = config_.collectives.protocol.automatic ? config::Protocol::kSimple
                                                         : config_.collectives.protocol.protocol;
  InstanceKey key{rt.job(), kPointToPointGroup, sequence, src, dst, tag};
  join(runtime, issued, key, spec, int64_t{src} * job.world_size + dst);
}

const collectives::ProgramGenerator& CollectiveInstances::generator(
    uint32_t job, int64_t group, const collectives::CollectiveSpec& spec) {
  const int kind = spec.collective ? static_cast<int>(*spec.collective) : -1;
  // A group's parts (collectives by dimension) differ in their first member or their size; the
  // same group by dimension or flat, in its algorithm.
  const int algorithm =
      static_cast<int>(spec.algorithm.value_or(collectives::default_algorithm(spec.collective)));
  auto key = std::make_tuple(job, kind, group, spec.bytes, spec.ranks.front(), spec.ranks.size(),
                             algorithm);
  auto it = generators_.find(key);
  if (it == generators_.end()) {
    it = generators_.emplace(key, std::make_unique<collectives::ProgramGenerator>(spec)).first;
  }
  return *it->second;
}

CollectiveInstance* CollectiveInstances::open_instance(
    const RankRuntime& rt, const trace::TraceNode& node, const std::string& file,
    const InstanceKey& key, const collectives::CollectiveSpec& spec, int64_t generator_group) {
  const collectives::ProgramGenerator* made = nullptr;
  try {
    made = &generator(rt.job(), generator_group, spec);
  } catch (const collectives::SpecError& e) {
    run_.stop_stuck(fmt::format("{}: record {} (node id {}): cannot build {} of {} bytes: {}", file,
                                node.record_index, node.id, kind_label(spec.collective), spec.bytes,
                                e.what()));
    return nullptr;
  }
  CollectiveRecord record;
  record.instance = next_id_++;
  record.job = rt.job();
  record.kind = spec.collective;
  record.algorithm = made->spec().algorithm;
  record.protocol = spec.protocol;
  record.group = key.group;
  record.sequence = key.sequence;
  record.tag = key.tag;
  record.trace_bytes = spec.bytes;
  record.algbw_bytes = made->spec().layout.full_bytes();
  record.iteration = rt.iteration();
  record.warmup = rt.iteration() < jobs_[rt.job()].config->warmup_iterations;
  record.src = key.src;
  record.dst = key.dst;
  std::vector<uint8_t> here;
  if (split_.active()) {
    for (int32_t member : made->spec().ranks) {
      here.push_back(split_.rank_here(rt.job(), member) ? 1 : 0);
    }
  }
  auto instance = std::make_unique<CollectiveInstance>(key, record, *made,
                                                       jobs_[rt.job()].world_size, std::move(here));
  by_id_.emplace(record.instance, instance.get());
  CollectiveInstance& opened = *by_key_.emplace(key, std::move(instance)).first->second;
  if (split_.active() && !register_wire_hash(opened)) return nullptr;
  // CollNet's aggregation nodes wait in the switch for what the members send up.
  opened.arrive_aggregators();
  for (uint32_t node = opened.size(); node < opened.participants(); ++node) {
    MemberContext context(posting_, posting_.own_lane(), opened, node);
    opened.member(node).execution.start(context);
  }
  return &opened;
}

std::string CollectiveInstances::mismatch(const CollectiveInstance& instance,
                                          const trace::TraceNode& node, const std::string& file,
                                          const collectives::CollectiveSpec& spec) const {
  // Every member must agree on what the n-th collective of the group is.
  const CollectiveRecord& first = instance.record();
  if (first.kind == spec.collective && first.trace_bytes == spec.bytes) return {};
  const InstanceKey& key = instance.key();
  uint32_t arrived = 0;
  while (!instance.member(arrived).arrived) ++arrived;
  return fmt::format(
      "mismatched traces in job \"{}\": {}: record {} (node id {}) issues {} of {} bytes as "
      "collective #{} of {}, but rank {} issued {} of {} bytes there",
      jobs_[key.job].config->name, file, node.record_index, node.id, kind_label(spec.collective),
      spec.bytes, key.sequence,
      key.group == kPointToPointGroup
          ? fmt::format("the sends from rank {} to rank {} with tag {}", key.src, key.dst, key.tag)
          : control::group_label(key.group),
      instance.ranks()[arrived], kind_label(first.kind), first.trace_bytes);
}

void CollectiveInstances::join(uint32_t runtime, feeder::IssuedNode issued, const InstanceKey& key,
                               const collectives::CollectiveSpec& spec, int64_t generator_group) {
  RankRuntime& rt = runtimes_[runtime];
  const ReplayedJob& job = jobs_[rt.job()];
  const trace::TraceNode& node = *issued.node;
  const std::string& file = job.traces->files()[static_cast<size_t>(rt.rank())].path;
  auto it = by_key_.find(key);
  CollectiveInstance* found = nullptr;
  if (it == by_key_.end()) {
    found = open_instance(rt, node, file, key, spec, generator_group);
    if (found == nullptr) return;
  } else {
    found = it->second.get();
    std::string diagnosis = mismatch(*found, node, file, spec);
    if (!diagnosis.empty()) {
      run_.stop_stuck(std::move(diagnosis));
      return;
    }
  }
  CollectiveInstance& instance = *found;
  const uint32_t position = key.group == kPointToPointGroup
                                ? (node.type == trace::NodeType::kCommSend ? 0u : 1u)
                                : instance.position_of(rt.rank());
  if (position >= instance.size() || instance.member(position).arrived) {
    run_.stop_stuck(fmt::format(
        "{}: record {} (node id {}): rank {} joins collective #{} of {} {}", file,
        node.record_index, node.id, rt.rank(), key.sequence, control::group_label(key.group),
        position >= instance.size() ? "but is not a member of the group" : "twice"));
    return;
  }
  instance.arrive(position, runtime, issued, clock_.now());
  rt.node_started(NodeActivity::kCommunication, issued.slot, clock_.now(),
                  static_cast<int64_t>(instance.record().instance));
  rt.joined().push_back(key);
  PostingLane& lane = posting_.own_lane();
  MemberContext context(posting_, lane, instance, position);
  InstanceMember& member = instance.member(position);
  member.execution.start(context);
  for (const EarlyData& early : member.early) {
    deliver(lane, instance, position, early.peer, early.qp, early.index);
  }
  member.early.clear();
  member_progressed(instance, position);
  // Members (and aggregation nodes) already there may now send to the newcomer.
  for (uint32_t p = 0; p < instance.participants(); ++p) {
    InstanceMember& other = instance.member(p);
    if (p == position || !other.arrived || other.done) continue;
    MemberContext peer(posting_, lane, instance, p);
    other.execution.peer_arrived(position, peer);
    member_progressed(instance, p);
  }
}

void CollectiveInstances::member_progressed(CollectiveInstance& instance, uint32_t position) {
  if (!instance.finish_member(position, clock_.now())) return;
  if (instance.is_aggregator(position)) {  // no node of a trace to complete
    if (instance.complete()) finished_.push_back(instance.record().instance);
    return;
  }
  InstanceMember& member = instance.member(position);
  RankRuntime& rt = runtimes_[member.runtime];
  auto& joined = rt.joined();
  joined.erase(std::find(joined.begin(), joined.end(), instance.key()));
  run_.complete_node(member.runtime, member.node, NodeActivity::kCommunication);
  if (instance.complete()) finished_.push_back(instance.record().instance);
}

void CollectiveInstances::handle(PostingLane& lane, const FlowEvent& event) {
  if (event.wire_hash != 0) {
    handle_remote_delivery(event);
    return;
  }
  CollectiveInstance* instance = find(event.instance);
  if (instance == nullptr) return;
  const uint32_t sender = instance->position_of(event.src_rank);
  const uint32_t dst = instance->position_of(event.dst_rank);
  if (event.delivered) {
    deliver(lane, *instance, dst, sender, event.qp, event.index);
  } else {
    send_completed(lane, *instance, sender, event.op);
  }
}

void CollectiveInstances::deliver(PostingLane& lane, CollectiveInstance& instance,
                                  uint32_t position, uint32_t sender, uint16_t qp, uint32_t index) {
  InstanceMember& member = instance.member(position);
  if (!member.arrived) {  // an eager send ahead of its RECV: kept until the RECV is issued
    member.early.push_back({sender, qp, index});
    return;
  }
  MemberContext context(posting_, lane, instance, position);
  if (!member.execution.data_arrived(sender, qp, index, context)) {
    std::string diagnosis = fmt::format(
        "instance {}: {} received message #{} from {} on QP {} that its step program does not "
        "expect",
        instance.record().instance, participant_label(instance, position), index,
        participant_label(instance, sender), qp);
    if (lane.keeps()) {
      lane.fail(std::move(diagnosis));
    } else {
      run_.stop_stuck(std::move(diagnosis));
    }
    return;
  }
  member_progressed(instance, position);
}

void CollectiveInstances::send_completed(PostingLane& lane, CollectiveInstance& instance,
                                         uint32_t sender, uint32_t op) {
  MemberContext context(posting_, lane, instance, sender);
  instance.member(sender).execution.send_completed(op, context);
  member_progressed(instance, sender);
}

void CollectiveInstances::finish_local_transfer(const LocalTransfer& transfer) {
  CollectiveInstance* instance = find(transfer.instance);
  if (instance == nullptr) return;
  PostingLane& lane = posting_.own_lane();
  deliver(lane, *instance, transfer.dst, transfer.src, transfer.request.qp, transfer.request.index);
  send_completed(lane, *instance, transfer.src, transfer.request.op);
}

bool CollectiveInstances::any_incomplete() const {
  return std::any_of(by_key_.begin(), by_key_.end(),
                     [](const auto& entry) { return !entry.second->complete(); });
}

void CollectiveInstances::forget(const CollectiveInstance& instance) {
  const InstanceKey key = instance.key();
  if (split_.active()) by_wire_hash_.erase((uint64_t{key.job} << 32) | instance.wire_hash());
  by_id_.erase(instance.record().instance);
  by_key_.erase(key);
}

}  // namespace etwire::engine

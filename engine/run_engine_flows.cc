// The run engine hearing from the transport: every finished flow is counted, recorded and its FCT
// sampled; deliveries and finishes that end a chunk operation are queued (Posting) and handed to
// the instances once drained; finished instances are retired into the results.
#include <fmt/format.h>

#include "engine/flow_user.h"
#include "engine/run_engine.h"
#include "engine/wire_tag.h"

namespace etwire::engine {

void RunEngine::on_flow_delivered(const transport::FlowRecord& record) {
  last_progress_ = clock_.now();
  delivered_flow_work(posting_.own_lane(), record, {});
}

void RunEngine::delivered_flow_work(PostingLane& lane, const transport::FlowRecord& record,
                                    Turn turn) {
  if (!user_last(record.tags.user)) return;
  posting_.queue(lane,
                 {true, record.tags.collective, record.tags.src_rank, record.tags.dst_rank,
                  record.tags.qp_index, user_op(record.tags.user), user_index(record.tags.user)},
                 turn);
}

void RunEngine::on_flow_finished(const transport::FlowRecord& record) {
  CollectiveInstance* instance = note_finished_flow(record);
  finished_flow_work(posting_.own_lane(), record, instance, {});
}

CollectiveInstance* RunEngine::note_finished_flow(const transport::FlowRecord& finished) {
  last_progress_ = clock_.now();
  // Records show the QPs' wire numbers, which captures carry (an RNIC's records carry its own).
  transport::FlowRecord record = finished;
  if (!data_plane_->numbers_its_qps()) {
    record.qpn = loaded_.wire_qpn(record.src_port, record.qpn);
    record.dest_qpn = loaded_.wire_qpn(record.dst_port, record.dest_qpn);
  }
  if (options_.flows) options_.flows->append(record);
  ++results_.flows;
  CollectiveInstance* instance = instances_.find(record.tags.collective);
  const bool failed = record.status != transport::FlowStatus::kCompleted;
  if (failed) ++results_.failed_flows;
  ++results_.flows_by_status[static_cast<size_t>(record.status)];
  if (instance == nullptr) return nullptr;
  CollectiveRecord& owner = instance->record();
  if (failed) ++owner.failed_flows;
  if (!owner.warmup) telemetry_.flow(owner, record);
  // A message to another emulator process is delivered there: its FCT is not known here.
  if (!failed && !owner.warmup && record.delivered_at != clock::kNever) {
    const size_t kind =
        owner.kind ? static_cast<size_t>(*owner.kind) : size_t{trace::kCollectiveTypeCount};
    fct_samples_[kind].add(record.fct());
  }
  return instance;
}

void RunEngine::finished_flow_work(PostingLane& lane, const transport::FlowRecord& record,
                                   CollectiveInstance* instance, Turn turn) {
  if (instance != nullptr) {
    // Its bytes of its connection's buffer are free for the messages waiting (an instance
    // retires only after all its messages finished, so every message in flight finds it).
    posting_.message_finished(lane, instance->key().job, record.tags.src_rank, record.tags.dst_rank,
                              record.tags.qp_index, record.bytes, turn);
  }
  if (!user_last(record.tags.user)) return;
  FlowEvent event{false,
                  record.tags.collective,
                  record.tags.src_rank,
                  record.tags.dst_rank,
                  record.tags.qp_index,
                  user_op(record.tags.user),
                  user_index(record.tags.user)};
  posting_.queue(lane, event, turn);
  // A failed message never reaches its receiver: release the receive anyway, so the run goes on
  // and reports the failure instead of waiting for bytes that will not come. A receiver in another
  // emulator process is not here to release (its own watchdog finds it waiting). (A window's lane
  // is given no failed flow.)
  bool receiver_here = instance == nullptr;  // retired: handle() drops it either way
  if (!receiver_here) {
    const uint32_t receiver = instance->position_of(record.tags.dst_rank);
    receiver_here = receiver < instance->participants() && instance->here(receiver);
  }
  if (record.status != transport::FlowStatus::kCompleted && record.delivered_at == clock::kNever &&
      receiver_here) {
    event.delivered = true;
    posting_.queue(lane, event, turn);
  }
}

void RunEngine::on_delivered_to_responder(uint32_t requester_qpn, clock::Nanos now,
                                          uint32_t ecn_marks, uint32_t immediate) {
  last_progress_ = clock_.now();
  const SplitRun::RemoteSender* from = split_.sender(requester_qpn);
  if (from == nullptr) {
    stop_stuck(fmt::format(
        "a message from requester QP {} arrived, which no connection of this process's ranks "
        "names: the emulator processes do not agree on the address plan",
        requester_qpn));
    return;
  }
  const auto sender_port = static_cast<uint32_t>(jobs_[from->job].placement->port(from->src));
  const uint32_t recorded = data_plane_->numbers_its_qps()
                                ? data_plane_->recorded_requester_qpn(requester_qpn)
                                : loaded_.wire_qpn(sender_port, requester_qpn);
  split_.delivered(*from, sender_port, recorded, ecn_marks, now);
  if (!wire_tag_last(immediate)) return;  // a chunk operation's earlier messages
  FlowEvent event;
  event.delivered = true;
  event.src_rank = from->src;
  event.dst_rank = from->dst;
  event.qp = from->qp;
  event.wire_hash = wire_tag_instance(immediate);
  event.job = from->job;
  posting_.queue(event);
}

void RunEngine::handle(const FlowEvent& event) {
  if (!stopped_) instances_.handle(posting_.own_lane(), event);
}

void RunEngine::retire_finished_instances() {
  instances_.retire_finished([this](const CollectiveInstance& instance) {
    results_.collectives.push_back(instance.record());
    collective_members_here_.push_back(instance.members_here());
    telemetry_.collective(results_.collectives.back());
  });
}

}  // namespace etwire::engine

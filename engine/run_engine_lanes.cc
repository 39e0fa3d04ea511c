// The engine's work on a partitioned twin's window of flow reports, in lanes on the window's
// threads (dataplane/report_lanes.h): a lane per partition takes the reports whose member's port
// is there, when no report of the window reaches beyond its member. What every lane may then
// touch: its members' step programs and the slice windows of their connections (made from the
// traffic plan before the run, so no lane adds one), and what it posts and counts, which it keeps
// for the engine's thread. What only the engine's thread touches: flows.csv, the run's counters,
// FCT samples and telemetry (settle_instant), connections opened, members joining, nodes
// completing, instances finishing.
#include <algorithm>

#include "engine/flow_user.h"
#include "engine/run_engine.h"

namespace etwire::engine {

bool RunEngine::lanes_possible() const {
  if (!data_plane_->virtual_time() || split_.active()) return false;
  // Ranks of one host move bytes over its interconnect on the engine's clock; CollNet's
  // aggregation nodes run in the switch, in no rank's partition.
  return std::all_of(loaded_.placements.begin(), loaded_.placements.end(), [](const auto& job) {
    return job && job->ranks_per_host <= 1 && job->aggregator_ports.empty();
  });
}

void RunEngine::open_lanes(uint32_t lanes) {
  // Without every connection's slice window made first, a lane would add them to what all read.
  if (!posting_.make_planned_windows()) return;  // no lane: every window goes the serial way
  lanes_.clear();
  for (uint32_t lane = 0; lane < lanes; ++lane) lanes_.emplace_back(true);
  lane_checks_.resize(lanes);
}

bool RunEngine::lane_can_take(uint32_t lane, std::span<const dataplane::LaneReport> reports) {
  // A failed flow releases its receive at once, in another lane.
  if (lanes_.empty() || stopped_ || results_.failed_flows > 0) return false;
  LaneCheck& check = lane_checks_[lane];
  check.touched.clear();
  check.finishing.clear();
  for (const dataplane::LaneReport& report : reports) {
    const dataplane::FlowJoin::Told& told = *report.told;
    if (told.kind == dataplane::FlowJoin::Told::Kind::kDeliveredToResponder) return false;
    const transport::FlowRecord& record = told.record;
    if (record.status != transport::FlowStatus::kCompleted) return false;
    const CollectiveInstance* instance = instances_.find(record.tags.collective);
    // Retired, or not a chunk operation's last message: nothing of a member's to move.
    if (instance == nullptr || !user_last(record.tags.user)) continue;
    const bool delivered = told.kind == dataplane::FlowJoin::Told::Kind::kDelivered;
    const uint32_t position =
        instance->position_of(delivered ? record.tags.dst_rank : record.tags.src_rank);
    if (position >= instance->size()) return false;
    const InstanceMember& member = instance->member(position);
    // Data ahead of its RECV waits for the RECV's join.
    if (!member.arrived || member.done) return false;
    check.touched.push_back(&member);
    if (!delivered) check.finishing.push_back(&member);
  }
  std::sort(check.finishing.begin(), check.finishing.end());
  std::sort(check.touched.begin(), check.touched.end());
  check.touched.erase(std::unique(check.touched.begin(), check.touched.end()), check.touched.end());
  for (const InstanceMember* member : check.touched) {
    // A member is done only once every send it emitted has completed, and a send completes only
    // when acknowledged: with one left over at the window's end it cannot finish in the window,
    // so neither can its node or its instance.
    const auto [first, last] =
        std::equal_range(check.finishing.begin(), check.finishing.end(), member);
    const auto completing = static_cast<uint64_t>(last - first);
    const MemberExecution& execution = member->execution;
    if (execution.sends_emitted() - execution.sends_completed() <= completing) return false;
  }
  return true;
}

void RunEngine::take_in_lane(uint32_t index, std::span<const dataplane::LaneReport> reports) {
  PostingLane& lane = lanes_[index];
  lane.begin_window();
  size_t i = 0;
  while (i < reports.size()) {
    // The engine's thread would take an instant's reports, then drain once.
    const clock::Nanos at = reports[i].at;
    lane.begin_instant(at);
    for (; i < reports.size() && reports[i].at == at; ++i) {
      const dataplane::LaneReport& report = reports[i];
      const Turn turn{report.report, report.step};
      const transport::FlowRecord& record = report.told->record;
      if (report.told->kind == dataplane::FlowJoin::Told::Kind::kFinished) {
        finished_flow_work(lane, record, instances_.find(record.tags.collective), turn);
      } else {
        delivered_flow_work(lane, record, turn);
      }
    }
    posting_.drain(lane, [&](const FlowEvent& event) { instances_.handle(lane, event); });
  }
}

void RunEngine::settle_instant(std::span<const dataplane::LaneReport> reports) {
  for (const dataplane::LaneReport& report : reports) {
    if (report.told->kind == dataplane::FlowJoin::Told::Kind::kFinished) {
      note_finished_flow(report.told->record);
    } else {
      last_progress_ = clock_.now();
    }
  }
  posting_.settle_lanes(lanes_);
  // A message its receiver's program does not expect stops the run, at the first such report.
  const PostingLane::Failure* first = nullptr;
  for (const PostingLane& lane : lanes_) {
    const PostingLane::Failure& failure = lane.failure();
    if (failure.at == clock_.now() && (first == nullptr || failure.turn < first->turn)) {
      first = &failure;
    }
  }
  if (first != nullptr && !stopped_) stop_stuck(first->diagnosis);
}

}  // namespace etwire::engine

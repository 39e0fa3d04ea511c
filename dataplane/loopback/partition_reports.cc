#include "dataplane/loopback/partition_reports.h"

#include <algorithm>
#include <tuple>

namespace etwire::dataplane {

namespace {

bool in_engine_order(const LaneReport& a, const LaneReport& b) {
  return std::tie(a.at, a.report, a.step) < std::tie(b.at, b.report, b.step);
}

}  // namespace

PartitionedDataPlane::JoinTail::JoinTail(PartitionedDataPlane& plane, FlowJoin& join)
    : plane_(plane),
      join_(join),
      by_thread_(plane.partitions_.size()),
      lanes_reports_(plane.partitions_.size()),
      can_take_(plane.partitions_.size(), 0) {
  for (Thread& thread : by_thread_) thread.by_lane.resize(plane.partitions_.size());
}

void PartitionedDataPlane::JoinTail::work(uint32_t thread, uint32_t threads) {
  Thread& mine = by_thread_[thread];
  mine.told.clear();
  mine.spans.clear();
  mine.next_span = 0;
  mine.next_told = 0;
  mine.heads.assign(plane_.partitions_.size(), 0);
  for (uint64_t tag = next(mine.heads, thread, threads); tag != kNone;
       tag = next(mine.heads, thread, threads)) {
    const size_t before = mine.told.size();
    const Partition::Report& taken = report(tag);
    switch (taken.kind) {
      case Partition::ReportKind::kDelivered:
        join_.delivered_later(taken.record.qpn, taken.record.delivered_at, taken.record.ecn_marks,
                              0, mine.told);
        break;
      case Partition::ReportKind::kFinished:
        join_.finished_later(taken.record, mine.told);
        break;
      case Partition::ReportKind::kDeliveredHere:
        join_.delivered_later(taken.requester_qpn, taken.at, taken.ecn_marks, taken.immediate,
                              mine.told);
        break;
    }
    if (mine.told.size() > before) {
      mine.spans.push_back({tag, static_cast<uint32_t>(mine.told.size() - before)});
    }
  }
  if (lanes_on_) sort_into_lanes(mine);
}

void PartitionedDataPlane::JoinTail::tell(uint64_t tag, uint32_t requester_partition) {
  // The window's threads are the twin's (PartitionedTwin::set_threads).
  Thread& took = by_thread_[requester_partition % plane_.threads()];
  if (took.next_span == took.spans.size() || took.spans[took.next_span].tag != tag) return;
  const uint32_t count = took.spans[took.next_span++].count;
  for (uint32_t i = 0; i < count; ++i) join_.tell(took.told[took.next_told++]);
}

uint64_t PartitionedDataPlane::JoinTail::next(std::vector<uint32_t>& heads, uint32_t thread,
                                              uint32_t threads) const {
  uint64_t earliest = kNone;
  clock::Nanos earliest_at = 0;
  for (uint32_t p = 0; p < heads.size(); ++p) {
    const std::vector<Partition::Report>& reports = plane_.partitions_[p]->reports();
    uint32_t& head = heads[p];
    while (head < reports.size() && reports[head].requester_partition % threads != thread) {
      ++head;
    }
    if (head < reports.size() && (earliest == kNone || reports[head].at < earliest_at)) {
      earliest = (uint64_t{p} << 32) | head;
      earliest_at = reports[head].at;
    }
  }
  if (earliest != kNone) ++heads[earliest >> 32];
  return earliest;
}

// A delivery moves its receiver's program on, a finish its sender's: the lane of that member's
// port. What the engine takes no lane for goes to the report's own partition.
uint32_t PartitionedDataPlane::JoinTail::lane_of(const FlowJoin::Told& told,
                                                 const Partition::Report& from) const {
  switch (told.kind) {
    case FlowJoin::Told::Kind::kDelivered:
      return plane_.twin_.partition_of_host(told.record.dst_port);
    case FlowJoin::Told::Kind::kFinished:
      return plane_.twin_.partition_of_host(told.record.src_port);
    case FlowJoin::Told::Kind::kDeliveredToResponder:
      break;
  }
  return from.requester_partition;
}

void PartitionedDataPlane::JoinTail::sort_into_lanes(Thread& mine) {
  for (std::vector<LaneReport>& lane : mine.by_lane) lane.clear();
  size_t told = 0;
  // In the join's order, which is the engine's (time, then report): each lane's list is too.
  for (const Span& span : mine.spans) {
    const Partition::Report& from = report(span.tag);
    for (uint32_t step = 0; step < span.count; ++step, ++told) {
      const FlowJoin::Told& what = mine.told[told];
      mine.by_lane[lane_of(what, from)].push_back({from.at, span.tag, step, &what});
    }
  }
}

void PartitionedDataPlane::JoinTail::work_later(uint32_t step, uint32_t thread, uint32_t threads) {
  const auto lanes = static_cast<uint32_t>(lanes_reports_.size());
  if (step == 1) {
    // Each thread's part of a lane is in the engine's order; sorted in place (std::inplace_merge
    // would take a buffer from the heap every window).
    for (uint32_t lane = thread; lane < lanes; lane += threads) {
      std::vector<LaneReport>& reports = lanes_reports_[lane];
      reports.clear();
      for (uint32_t t = 0; t < threads; ++t) {
        const std::vector<LaneReport>& part = by_thread_[t].by_lane[lane];
        reports.insert(reports.end(), part.begin(), part.end());
      }
      if (threads > 1) std::sort(reports.begin(), reports.end(), in_engine_order);
      can_take_[lane] = lanes_->lane_can_take(lane, reports) ? 1 : 0;
    }
    return;
  }
  if (!took_lanes()) return;
  for (uint32_t lane = thread; lane < lanes; lane += threads) {
    lanes_->take_in_lane(lane, lanes_reports_[lane]);
  }
}

bool PartitionedDataPlane::JoinTail::took_lanes() const {
  return lanes_on_ &&
         std::all_of(can_take_.begin(), can_take_.end(), [](uint8_t can) { return can != 0; });
}

const std::vector<LaneReport>& PartitionedDataPlane::JoinTail::lane_reports() {
  all_.clear();
  for (const std::vector<LaneReport>& lane : lanes_reports_) {
    all_.insert(all_.end(), lane.begin(), lane.end());
  }
  std::sort(all_.begin(), all_.end(), in_engine_order);
  return all_;
}

void PartitionedDataPlane::JoinTail::settle(size_t first) {
  size_t end = first;
  while (end < all_.size() && all_[end].at == all_[first].at) {
    join_.told_elsewhere(*all_[end].told);
    ++end;
  }
  lanes_->settle_instant(std::span<const LaneReport>(all_).subspan(first, end - first));
}

}  // namespace etwire::dataplane

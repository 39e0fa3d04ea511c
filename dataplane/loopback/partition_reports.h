// What a partitioned twin's window leaves for the engine (partitioned_data_plane.h): each
// partition's flow reports, their join on the window's threads (JoinTail), and the way they reach
// the engine: at their times on the engine's clock, told one by one (ReportRelay), or in lanes
// on the window's threads with the engine's thread settling each instant (report_lanes.h).
// Internal to the partitioned data plane.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "common/slot_pool.h"
#include "dataplane/flow_join.h"
#include "dataplane/loopback/partitioned_data_plane.h"
#include "dataplane/report_lanes.h"
#include "dataplane/worker.h"

namespace etwire::dataplane {

// One partition's worker, the flow reports its transport made in the current window (kept for the
// engine's part of it), and the messages the engine posted, each waiting on the partition's clock
// for its time. Only the partition's thread touches it inside a window, only the engine's between.
class PartitionedDataPlane::Partition final : public transport::FlowObserver,
                                              private clock::EventHandler {
 public:
  enum class ReportKind : uint8_t { kDelivered, kFinished, kDeliveredHere };
  struct Report {
    ReportKind kind = ReportKind::kDelivered;
    clock::Nanos at = 0;
    transport::FlowRecord record;  // kDelivered, kFinished
    uint32_t requester_qpn = 0;    // kDeliveredHere
    uint32_t ecn_marks = 0;
    uint32_t immediate = 0;
    uint32_t requester_partition = 0;  // the partition of the message's requester
  };

  // `requester_partition`: the partition of each requester, by QP number (the join's key).
  Partition(const config::TransportConfig& config, clock::VirtualClock& clock, uint32_t index,
            const std::vector<uint32_t>& requester_partition)
      : clock_(clock),
        worker_(config, clock, *this),
        index_(index),
        requester_partition_(requester_partition) {}

  Worker& worker() { return worker_; }
  const Worker& worker() const { return worker_; }
  clock::VirtualClock& clock() { return clock_; }
  std::vector<Report>& reports() { return reports_; }

  // Posts the message on the requester `requester_qpn` (held here) at `at`.
  void post_at(clock::Nanos at, uint32_t requester_qpn, uint64_t bytes,
               const transport::FlowTags& tags) {
    const uint32_t slot = posts_.put({requester_qpn, bytes, tags});
    clock_.run_at(at, this, slot);
  }

  // A transport reports a message's delivery with a record, and its finish, where it holds the
  // requester: here.
  void on_flow_delivered(const transport::FlowRecord& record) override {
    reports_.push_back({ReportKind::kDelivered, clock_.now(), record, 0, 0, 0, index_});
  }
  void on_flow_finished(const transport::FlowRecord& record) override {
    reports_.push_back({ReportKind::kFinished, clock_.now(), record, 0, 0, 0, index_});
  }
  void on_delivered_to_responder(uint32_t requester_qpn, clock::Nanos now, uint32_t ecn_marks,
                                 uint32_t immediate) override {
    // A QP no connection names stays here, where the join refuses it.
    const uint32_t requester_partition =
        requester_qpn < requester_partition_.size() ? requester_partition_[requester_qpn] : index_;
    reports_.push_back({ReportKind::kDeliveredHere,
                        now,
                        {},
                        requester_qpn,
                        ecn_marks,
                        immediate,
                        requester_partition});
  }

 private:
  struct Post {
    uint32_t requester_qpn = 0;
    uint64_t bytes = 0;
    transport::FlowTags tags;
  };

  void on_event(uint64_t slot, clock::Nanos) override {
    const Post post = posts_.take(static_cast<uint32_t>(slot));
    worker_.post(post.requester_qpn, post.bytes, post.tags);
  }

  clock::VirtualClock& clock_;
  Worker worker_;
  const uint32_t index_;
  const std::vector<uint32_t>& requester_partition_;
  std::vector<Report> reports_;
  SlotPool<Post> posts_;
};

// The flow join of a window's reports, at the window's end on the window's threads: the thread
// of the requester's partition (partition mod threads) takes a message's reports, so a
// connection's are taken on one thread, in the order the engine sees them (time, partition,
// report). Messages the engine posts in a window act in the next one, so the join of a window
// needs nothing of the engine's work in it. Spread over processes, every process's reports come
// in first (gather). A thread writes only its own lists, never the partitions' reports.
//
// With the engine's lanes (lanes_for_window), two steps follow: each thread gathers the lanes of
// its partitions (partition mod threads) from what every thread's join told, in the engine's
// order, and asks the engine whether each lane can take its reports; then, if every lane can,
// each lane takes them (took_lanes()).
class PartitionedDataPlane::JoinTail final : public twin::PartitionedTwin::WindowTail {
 public:
  JoinTail(PartitionedDataPlane& plane, FlowJoin& join);

  void gather() override { plane_.share_reports(); }
  void work(uint32_t thread, uint32_t threads) override;
  uint32_t later_steps() const override { return lanes_on_ ? 2 : 0; }
  void work_later(uint32_t step, uint32_t thread, uint32_t threads) override;

  // Between windows: the engine's lanes (nullptr: none), and whether the next window may use them.
  void set_lanes(ReportLanes* lanes) { lanes_ = lanes; }
  bool has_lanes() const { return lanes_ != nullptr; }
  void lanes_for_window(bool on) { lanes_on_ = on && lanes_ != nullptr; }
  // After the window: whether its lanes took its reports; if so, lane_reports() holds them all,
  // in the engine's order, and settle() hands the engine those of one instant.
  bool took_lanes() const;
  const std::vector<LaneReport>& lane_reports();
  void settle(size_t first);

  // On the engine's thread, in the engine's order of the reports: tells the engine what report
  // `tag` (partition, index) came to.
  void tell(uint64_t tag, uint32_t requester_partition);

 private:
  static constexpr uint64_t kNone = ~uint64_t{0};
  // What one thread took in the last window: what the join would tell, and for which reports.
  struct Span {
    uint64_t tag = 0;  // the report: partition (high half) and index
    uint32_t count = 0;
  };
  struct Thread {
    std::vector<FlowJoin::Told> told;
    std::vector<Span> spans;
    size_t next_span = 0;  // the engine's place in them
    size_t next_told = 0;
    std::vector<uint32_t> heads;  // the next report of each partition not yet looked at
    std::vector<std::vector<LaneReport>> by_lane;  // what it told, by lane, in order
  };

  const Partition::Report& report(uint64_t tag) const {
    return plane_.partitions_[tag >> 32]->reports()[static_cast<uint32_t>(tag)];
  }
  // The earliest report of this thread's not yet taken (by time, then partition), or kNone.
  uint64_t next(std::vector<uint32_t>& heads, uint32_t thread, uint32_t threads) const;
  // What the thread's join told, to the lanes of the members it moves on.
  void sort_into_lanes(Thread& mine);
  uint32_t lane_of(const FlowJoin::Told& told, const Partition::Report& from) const;

  PartitionedDataPlane& plane_;
  FlowJoin& join_;
  std::vector<Thread> by_thread_;
  ReportLanes* lanes_ = nullptr;
  bool lanes_on_ = false;
  std::vector<std::vector<LaneReport>> lanes_reports_;  // by lane, in the engine's order
  std::vector<uint8_t> can_take_;                       // by lane
  std::vector<LaneReport> all_;                         // every lane's, merged
};

// Hands a window's reports, as the flow join took them, to the engine at their times, as events
// on the engine's clock: the tag is the partition (high half) and the report's index there. After
// a window taken in lanes, one event per instant settles it (the tag: its first report in
// JoinTail::lane_reports, with kLaneInstant set).
class PartitionedDataPlane::ReportRelay final : public clock::EventHandler {
 public:
  static constexpr uint64_t kLaneInstant = uint64_t{1} << 63;

  ReportRelay(std::vector<std::unique_ptr<Partition>>& partitions, JoinTail& tail)
      : partitions_(partitions), tail_(tail) {}

  void on_event(uint64_t tag, clock::Nanos) override {
    if ((tag & kLaneInstant) != 0) {
      tail_.settle(tag & ~kLaneInstant);
      return;
    }
    const Partition::Report& report = partitions_[tag >> 32]->reports()[static_cast<uint32_t>(tag)];
    tail_.tell(tag, report.requester_partition);
  }

 private:
  std::vector<std::unique_ptr<Partition>>& partitions_;
  JoinTail& tail_;
};

}  // namespace etwire::dataplane

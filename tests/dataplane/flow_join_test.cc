#include "dataplane/flow_join.h"

#include <gtest/gtest.h>

#include <stdexcept>
#include <thread>
#include <vector>

namespace etwire::dataplane {
namespace {

struct Engine final : transport::FlowObserver {
  void on_flow_delivered(const transport::FlowRecord& record) override {
    delivered.push_back(record);
  }
  void on_flow_finished(const transport::FlowRecord& record) override {
    finished.push_back(record);
  }
  void on_delivered_to_responder(uint32_t requester_qpn, clock::Nanos now, uint32_t ecn_marks,
                                 uint32_t immediate) override {
    remote.push_back({requester_qpn, now, ecn_marks, immediate});
  }
  std::vector<transport::FlowRecord> delivered;
  std::vector<transport::FlowRecord> finished;
  struct Remote {
    uint32_t requester_qpn;
    clock::Nanos at;
    uint32_t ecn_marks;
    uint32_t immediate;
  };
  std::vector<Remote> remote;
};

// What the requester's transport reports when it finishes a message: its own numbering and no
// delivery time (the responder is elsewhere).
transport::FlowRecord sender_record(
    uint32_t qpn, clock::Nanos finished_at,
    transport::FlowStatus status = transport::FlowStatus::kCompleted) {
  transport::FlowRecord record;
  record.flow_id = 999;  // the transport's own number: the join's replaces it
  record.qpn = qpn;
  record.dest_qpn = qpn + 1;
  record.src_port = 3;
  record.dst_port = 5;
  record.finished_at = finished_at;
  record.packets = 2;
  record.status = status;
  return record;
}

TEST(FlowJoin, AFinishWaitsForItsDeliveryFromTheOtherSide) {
  Engine engine;
  FlowJoin join(engine);
  join.add_connection(3, 0x100, 5, 0x101);
  EXPECT_EQ(join.posted(0x100, 8192, {}, 10), 0u);
  EXPECT_EQ(join.in_progress(), 1u);

  // The sender's worker reports first (its report ring was drained first).
  join.finished(sender_record(0x100, 500));
  EXPECT_TRUE(engine.finished.empty());
  join.delivered(0x100, 400, 2);
  ASSERT_EQ(engine.delivered.size(), 1u);
  ASSERT_EQ(engine.finished.size(), 1u);
  const transport::FlowRecord& done = engine.finished[0];
  EXPECT_EQ(done.flow_id, 0u);
  EXPECT_EQ(done.posted_at, 10);
  EXPECT_EQ(done.delivered_at, 400);
  EXPECT_EQ(done.finished_at, 500);
  EXPECT_EQ(done.ecn_marks, 2u);
  EXPECT_EQ(done.packets, 2u);
  EXPECT_EQ(engine.delivered[0].bytes, 8192u);
  EXPECT_EQ(engine.delivered[0].dest_qpn, 0x101u);
  EXPECT_EQ(join.in_progress(), 0u);
}

TEST(FlowJoin, FlowsOfAConnectionFinishInPostingOrder) {
  Engine engine;
  FlowJoin join(engine);
  join.add_connection(0, 7, 1, 8);
  join.posted(7, 100, {}, 0);
  join.posted(7, 200, {}, 0);
  join.delivered(7, 50, 0);
  join.delivered(7, 60, 0);
  join.finished(sender_record(7, 70));
  join.finished(sender_record(7, 80));
  ASSERT_EQ(engine.finished.size(), 2u);
  EXPECT_EQ(engine.finished[0].flow_id, 0u);
  EXPECT_EQ(engine.finished[0].delivered_at, 50);
  EXPECT_EQ(engine.finished[1].flow_id, 1u);
  EXPECT_EQ(engine.finished[1].delivered_at, 60);
}

TEST(FlowJoin, FlowIdsCountPostsAcrossConnections) {
  Engine engine;
  FlowJoin join(engine);
  join.add_connection(0, 1, 1, 2);
  join.add_connection(1, 3, 0, 4);
  EXPECT_EQ(join.posted(1, 1, {}, 0), 0u);
  EXPECT_EQ(join.posted(3, 1, {}, 0), 1u);
  EXPECT_EQ(join.posted(1, 1, {}, 0), 2u);
  join.delivered(3, 5, 0);
  join.finished(sender_record(3, 6));
  ASSERT_EQ(engine.finished.size(), 1u);
  EXPECT_EQ(engine.finished[0].flow_id, 1u);
}

TEST(FlowJoin, AFailedFlowGoesWithoutItsDeliveryAndALateOneIsIgnored) {
  Engine engine;
  FlowJoin join(engine);
  join.add_connection(0, 1, 1, 2);
  join.posted(1, 100, {}, 0);
  join.posted(1, 100, {}, 0);
  join.finished(sender_record(1, 900, transport::FlowStatus::kRetryExceeded));
  ASSERT_EQ(engine.finished.size(), 1u);
  EXPECT_EQ(engine.finished[0].delivered_at, clock::kNever);
  // Its data did arrive; only the acknowledgements were lost.
  join.delivered(1, 950, 0);
  EXPECT_TRUE(engine.delivered.empty());
  // The next message's delivery is matched to it, not to the failed one.
  join.delivered(1, 1000, 0);
  join.finished(sender_record(1, 1100));
  ASSERT_EQ(engine.finished.size(), 2u);
  EXPECT_EQ(engine.finished[1].flow_id, 1u);
  EXPECT_EQ(engine.finished[1].delivered_at, 1000);
}

TEST(FlowJoin, ABothHalvesReportIsTheSameDelivery) {
  Engine engine;
  FlowJoin join(engine);
  join.add_connection(0, 1, 0, 2);
  join.posted(1, 64, {}, 0);
  transport::FlowRecord delivered = sender_record(1, clock::kNever);
  delivered.delivered_at = 30;
  delivered.ecn_marks = 1;
  join.on_flow_delivered(delivered);
  join.on_flow_finished(sender_record(1, 40));
  ASSERT_EQ(engine.finished.size(), 1u);
  EXPECT_EQ(engine.finished[0].delivered_at, 30);
  EXPECT_EQ(engine.finished[0].ecn_marks, 1u);
}

// A run split between processes: the sender's process finishes its messages without their
// deliveries, and the receiver's passes deliveries on for messages posted elsewhere.
TEST(FlowJoin, HalvesInOtherProcessesAreNotWaitedFor) {
  Engine sender_side;
  FlowJoin sender(sender_side);
  sender.add_connection(3, 40, 5, 41, HalvesHere::kRequester);
  sender.posted(40, 1000, {}, 10);
  sender.posted(40, 2000, {}, 11);
  sender.finished(sender_record(40, 50));
  ASSERT_EQ(sender_side.finished.size(), 1u);
  EXPECT_EQ(sender_side.finished[0].delivered_at, clock::kNever);
  EXPECT_EQ(sender_side.finished[0].posted_at, 10);
  EXPECT_EQ(sender.in_progress(), 1u);

  Engine receiver_side;
  FlowJoin receiver(receiver_side);
  receiver.add_connection(3, 40, 5, 41, HalvesHere::kResponder);
  receiver.delivered(40, 60, 2, 0xabc);
  receiver.delivered(40, 70, 0, 0xdef);
  ASSERT_EQ(receiver_side.remote.size(), 2u);
  EXPECT_EQ(receiver_side.remote[1].requester_qpn, 40u);
  EXPECT_EQ(receiver_side.remote[0].at, 60);
  EXPECT_EQ(receiver_side.remote[0].ecn_marks, 2u);
  EXPECT_EQ(receiver_side.remote[0].immediate, 0xabcu);  // the message's tag, passed on
  EXPECT_EQ(receiver_side.remote[1].immediate, 0xdefu);
  EXPECT_TRUE(receiver_side.delivered.empty());
  EXPECT_EQ(receiver.in_progress(), 0u);
}

// Reports taken in off the engine's thread: nothing reaches the engine until told, and what is
// told is what taking them at once would have told, in the same order.
TEST(FlowJoin, ReportsTakenLaterTellTheEngineTheSameWhenTold) {
  Engine at_once;
  Engine later;
  FlowJoin now_join(at_once);
  FlowJoin later_join(later);
  for (FlowJoin* join : {&now_join, &later_join}) {
    join->add_connection(3, 0x100, 5, 0x101);
    join->posted(0x100, 100, {}, 10);
    join->posted(0x100, 200, {}, 11);
    join->posted(0x100, 300, {}, 12);
  }
  now_join.finished(sender_record(0x100, 500, transport::FlowStatus::kRetryExceeded));
  now_join.delivered(0x100, 400, 2);  // the failed one's: ignored
  now_join.delivered(0x100, 600, 1);
  now_join.finished(sender_record(0x100, 700));

  std::vector<FlowJoin::Told> told;
  later_join.finished_later(sender_record(0x100, 500, transport::FlowStatus::kRetryExceeded), told);
  later_join.delivered_later(0x100, 400, 2, 0, told);
  later_join.delivered_later(0x100, 600, 1, 0, told);
  later_join.finished_later(sender_record(0x100, 700), told);
  EXPECT_TRUE(later.delivered.empty());
  EXPECT_TRUE(later.finished.empty());
  EXPECT_EQ(later_join.in_progress(), 3u);  // nothing told yet
  ASSERT_EQ(told.size(), 3u);
  EXPECT_EQ(told[0].kind, FlowJoin::Told::Kind::kFinished);
  EXPECT_EQ(told[1].kind, FlowJoin::Told::Kind::kDelivered);
  EXPECT_EQ(told[2].kind, FlowJoin::Told::Kind::kFinished);
  for (const FlowJoin::Told& one : told) later_join.tell(one);

  EXPECT_EQ(later_join.in_progress(), now_join.in_progress());
  ASSERT_EQ(later.finished.size(), at_once.finished.size());
  ASSERT_EQ(later.delivered.size(), at_once.delivered.size());
  for (size_t i = 0; i < later.finished.size(); ++i) {
    EXPECT_EQ(later.finished[i].flow_id, at_once.finished[i].flow_id);
    EXPECT_EQ(later.finished[i].delivered_at, at_once.finished[i].delivered_at);
    EXPECT_EQ(later.finished[i].status, at_once.finished[i].status);
  }
  EXPECT_EQ(later.delivered[0].flow_id, 1u);
  EXPECT_EQ(later.delivered[0].ecn_marks, 1u);
}

TEST(FlowJoin, ADeliveryToAResponderTakenLaterIsPassedOnWhenTold) {
  Engine engine;
  FlowJoin join(engine);
  join.add_connection(3, 40, 5, 41, HalvesHere::kResponder);
  std::vector<FlowJoin::Told> told;
  join.delivered_later(40, 60, 2, 0xabc, told);
  EXPECT_TRUE(engine.remote.empty());
  ASSERT_EQ(told.size(), 1u);
  join.tell(told[0]);
  ASSERT_EQ(engine.remote.size(), 1u);
  EXPECT_EQ(engine.remote[0].requester_qpn, 40u);
  EXPECT_EQ(engine.remote[0].at, 60);
  EXPECT_EQ(engine.remote[0].ecn_marks, 2u);
  EXPECT_EQ(engine.remote[0].immediate, 0xabcu);
}

// Two threads at once, each on connections of its own, as a partitioned twin's window closes.
TEST(FlowJoin, ThreadsTakeReportsOfTheirOwnConnectionsAtOnce) {
  Engine engine;
  FlowJoin join(engine);
  constexpr uint32_t kConnections = 64;
  constexpr uint32_t kMessages = 200;
  for (uint32_t c = 0; c < kConnections; ++c) join.add_connection(c, 2 * c, c + 1, 2 * c + 1);
  for (uint32_t m = 0; m < kMessages; ++m) {
    for (uint32_t c = 0; c < kConnections; ++c) join.posted(2 * c, 64, {}, m);
  }
  std::vector<FlowJoin::Told> told[2];
  auto take = [&](uint32_t thread) {
    for (uint32_t m = 0; m < kMessages; ++m) {
      for (uint32_t c = thread; c < kConnections; c += 2) {
        join.delivered_later(2 * c, 1000 + m, 0, 0, told[thread]);
        join.finished_later(sender_record(2 * c, 2000 + m), told[thread]);
      }
    }
  };
  std::thread other(take, 1);
  take(0);
  other.join();
  for (const auto& list : told) {
    EXPECT_EQ(list.size(), 2u * kMessages * kConnections / 2);
    for (const FlowJoin::Told& one : list) join.tell(one);
  }
  EXPECT_EQ(engine.finished.size(), kMessages * kConnections);
  EXPECT_EQ(join.in_progress(), 0u);
  // Each connection's flows finished in posting order, each with its own delivery.
  std::vector<uint64_t> last(kConnections, 0);
  for (const transport::FlowRecord& record : engine.finished) {
    const uint32_t c = record.qpn / 2;
    EXPECT_EQ(record.flow_id % kConnections, c);
    EXPECT_EQ(record.delivered_at - 1000, static_cast<clock::Nanos>(record.flow_id / kConnections));
    EXPECT_GE(record.flow_id, last[c]);
    last[c] = record.flow_id + 1;
  }
}

TEST(FlowJoin, ReportsForUnknownQpsAndTakenNumbersAreErrors) {
  Engine engine;
  FlowJoin join(engine);
  join.add_connection(0, 1, 1, 2);
  EXPECT_THROW(join.add_connection(0, 1, 1, 3), std::invalid_argument);
  EXPECT_THROW(join.posted(5, 1, {}, 0), std::logic_error);
  EXPECT_THROW(join.delivered(5, 1, 0), std::logic_error);
  EXPECT_FALSE(join.knows(5));
  EXPECT_TRUE(join.knows(1));
}

}  // namespace
}  // namespace etwire::dataplane

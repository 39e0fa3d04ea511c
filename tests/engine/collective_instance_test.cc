// A collective instance of a run split between emulator processes: it is complete when its
// members here are, and it places the messages that arrive from members elsewhere by their
// channel (sender, receiver, QP), in arrival order. And the wire tag that tells such a receiver
// which instance a message belongs to.
#include "engine/collective_instance.h"

#include <gtest/gtest.h>

#include <set>

#include "collectives/generate.h"
#include "engine/wire_tag.h"

namespace etwire::engine {
namespace {

collectives::CollectiveSpec all_to_all(uint32_t members) {
  collectives::CollectiveSpec spec;
  spec.collective = trace::CollectiveType::kAllToAll;
  for (uint32_t r = 0; r < members; ++r) spec.ranks.push_back(static_cast<int32_t>(r));
  spec.bytes = 1 << 20;
  return spec;
}

TEST(CollectiveInstance, MessagesFromElsewhereArePlacedPerChannel) {
  const collectives::ProgramGenerator generator(all_to_all(4));
  // Members 0 and 1 here, 2 and 3 in another process.
  CollectiveInstance instance({0, -1, 0, 0, 0, 0}, {}, generator, 4, {1, 1, 0, 0});
  EXPECT_EQ(instance.members_here(), 2u);
  EXPECT_TRUE(instance.here(1));
  EXPECT_FALSE(instance.here(2));
  // One sender's messages to two receivers on one QP are two channels, each counted from 0.
  EXPECT_EQ(instance.next_remote_index(2, 0, 0), 0u);
  EXPECT_EQ(instance.next_remote_index(2, 1, 0), 0u);
  EXPECT_EQ(instance.next_remote_index(2, 0, 0), 1u);
  EXPECT_EQ(instance.next_remote_index(3, 0, 0), 0u);
  EXPECT_EQ(instance.next_remote_index(2, 0, 1), 0u);
  EXPECT_EQ(instance.next_remote_index(2, 1, 0), 1u);
  EXPECT_EQ(instance.next_remote_index(2, 0, 0), 2u);
}

// Moves a member's bytes at once: every send is ready and recorded.
struct RecordSends final : MemberActions {
  bool peer_ready(uint32_t) const override { return true; }
  void send(const SendRequest& request) override { sends.push_back(request); }
  std::vector<SendRequest> sends;
};

TEST(CollectiveInstance, IsCompleteWhenItsMembersHereAre) {
  const collectives::ProgramGenerator generator(all_to_all(4));
  // Only member 1 here.
  CollectiveInstance split({0, -1, 0, 0, 0, 0}, {}, generator, 4, {0, 1, 0, 0});
  EXPECT_EQ(split.members_here(), 1u);
  split.arrive(1, 0, {}, 100);
  EXPECT_EQ(split.record().last_arrival, 100);  // the last member here arrived
  MemberExecution& member = split.member(1).execution;
  RecordSends actions;
  member.start(actions);
  EXPECT_FALSE(split.finish_member(1, 150));  // its program has not run
  // Everything the others send it arrives; everything it sends is acknowledged.
  for (uint32_t peer : {0u, 2u, 3u}) {
    for (uint16_t qp = 0; qp < 8; ++qp) {
      for (uint32_t index = 0; member.data_arrived(peer, qp, index, actions); ++index) {
      }
    }
  }
  for (size_t i = 0; i < actions.sends.size(); ++i)
    member.send_completed(actions.sends[i].op, actions);
  ASSERT_TRUE(member.done());
  EXPECT_TRUE(split.finish_member(1, 200));
  EXPECT_TRUE(split.complete());
  EXPECT_EQ(split.record().end, 200);

  // The same collective in one process waits for all four.
  CollectiveInstance whole({0, -1, 0, 0, 0, 0}, {}, generator, 4);
  EXPECT_EQ(whole.members_here(), 4u);
  whole.arrive(1, 0, {}, 100);
  EXPECT_EQ(whole.record().last_arrival, 0);  // three members have not arrived
  EXPECT_FALSE(whole.complete());
}

// Runs a participant's whole program: everything its peers could send it arrives, everything it
// sends is acknowledged.
void run_to_the_end(CollectiveInstance& instance, uint32_t position) {
  MemberExecution& execution = instance.member(position).execution;
  RecordSends actions;
  execution.start(actions);
  for (uint32_t peer = 0; peer < instance.participants(); ++peer) {
    for (uint16_t qp = 0; qp < 8; ++qp) {
      for (uint32_t index = 0; execution.data_arrived(peer, qp, index, actions); ++index) {
      }
    }
  }
  for (size_t i = 0; i < actions.sends.size(); ++i) {
    execution.send_completed(actions.sends[i].op, actions);
  }
}

// Positions of ranks: a run of consecutive ranks in order, ranks out of order, and ranks with gaps.
TEST(CollectiveInstance, PositionsOfRanksInAnyGroup) {
  const auto positions = [](std::vector<int32_t> ranks) {
    collectives::CollectiveSpec spec;
    spec.collective = trace::CollectiveType::kAllReduce;
    spec.algorithm = collectives::Algorithm::kRing;
    spec.ranks = std::move(ranks);
    spec.bytes = 1 << 16;
    const collectives::ProgramGenerator generator(spec);
    const CollectiveInstance instance({0, 1, 0, 0, 0, 0}, {}, generator, 16);
    std::vector<uint32_t> found;
    for (int32_t rank = -2; rank < 18; ++rank) found.push_back(instance.position_of(rank));
    return found;
  };
  // Ranks -2 .. 17; 4 (the participants) where a rank is not a member.
  const std::vector<uint32_t> consecutive = positions({4, 5, 6, 7});
  const std::vector<uint32_t> shuffled = positions({5, 4, 7, 6});
  const std::vector<uint32_t> gaps = positions({0, 2, 4, 6});
  for (int32_t rank = -2; rank < 18; ++rank) {
    const size_t at = static_cast<size_t>(rank + 2);
    const bool member = rank >= 4 && rank <= 7;
    EXPECT_EQ(consecutive[at], member ? static_cast<uint32_t>(rank - 4) : 4u) << rank;
    const uint32_t in_shuffled[] = {1, 0, 3, 2};
    EXPECT_EQ(shuffled[at], member ? in_shuffled[rank - 4] : 4u) << rank;
    const bool even_member = rank >= 0 && rank <= 6 && rank % 2 == 0;
    EXPECT_EQ(gaps[at], even_member ? static_cast<uint32_t>(rank / 2) : 4u) << rank;
  }
}

TEST(CollectiveInstance, CollNetsAggregationNodeIsAParticipantAfterTheMembers) {
  collectives::CollectiveSpec spec;
  spec.collective = trace::CollectiveType::kAllReduce;
  spec.algorithm = collectives::Algorithm::kCollNet;
  spec.ranks = {2, 3, 4, 5};
  spec.bytes = 1 << 16;
  const collectives::ProgramGenerator generator(spec);
  // A job of 8 ranks: its aggregation node is participant rank 8.
  CollectiveInstance instance({0, 1, 0, 0, 0, 0}, {}, generator, 8);
  ASSERT_EQ(instance.size(), 4u);
  ASSERT_EQ(instance.participants(), 5u);
  EXPECT_TRUE(instance.is_aggregator(4));
  EXPECT_EQ(instance.participant_rank(4), 8);
  EXPECT_EQ(instance.participant_rank(1), 3);
  EXPECT_EQ(instance.position_of(8), 4u);
  EXPECT_EQ(instance.position_of(3), 1u);
  EXPECT_EQ(instance.position_of(7), 5u);  // neither a member nor a node
  EXPECT_EQ(instance.members_here(), 4u);

  instance.arrive_aggregators();
  EXPECT_TRUE(instance.member(4).arrived);
  EXPECT_EQ(instance.member(4).runtime, kNoRuntime);
  EXPECT_EQ(instance.arrived(), 0u);  // no member yet
  for (uint32_t p = 0; p < 4; ++p) instance.arrive(p, p, {}, 10 + p);
  EXPECT_EQ(instance.record().last_arrival, 13);
  for (uint32_t p = 0; p < 5; ++p) run_to_the_end(instance, p);
  for (uint32_t p = 0; p < 4; ++p) EXPECT_TRUE(instance.finish_member(p, 100 + p));
  // The collective ended with its last member, but the node's last sends are still its own.
  EXPECT_EQ(instance.record().end, 103);
  EXPECT_FALSE(instance.complete());
  EXPECT_TRUE(instance.finish_member(4, 200));
  EXPECT_TRUE(instance.complete());
  EXPECT_EQ(instance.record().end, 103);
}

TEST(WireTag, NamesTheInstanceAndTheEndOfAChunkOperation) {
  std::set<uint32_t> hashes;
  for (uint64_t sequence = 0; sequence < 1000; ++sequence) {
    const uint32_t hash = instance_wire_hash({0, -1, sequence, 0, 0, 0});
    EXPECT_NE(hash, 0u);
    EXPECT_EQ(hash & 0x80000000u, 0u);
    hashes.insert(hash);
    EXPECT_EQ(wire_tag_instance(wire_tag(hash, true)), hash);
    EXPECT_TRUE(wire_tag_last(wire_tag(hash, true)));
    EXPECT_FALSE(wire_tag_last(wire_tag(hash, false)));
    EXPECT_NE(wire_tag(hash, false), 0u);  // 0 would be no tag at all
  }
  EXPECT_EQ(hashes.size(), 1000u);  // consecutive collectives of a group do not collide
  // Every field of the key counts.
  const InstanceKey key{1, 3, 7, 2, 5, 9};
  for (InstanceKey other : {InstanceKey{2, 3, 7, 2, 5, 9}, InstanceKey{1, 4, 7, 2, 5, 9},
                            InstanceKey{1, 3, 8, 2, 5, 9}, InstanceKey{1, 3, 7, 3, 5, 9},
                            InstanceKey{1, 3, 7, 2, 6, 9}, InstanceKey{1, 3, 7, 2, 5, 8}}) {
    EXPECT_NE(instance_wire_hash(key), instance_wire_hash(other));
  }
}

}  // namespace
}  // namespace etwire::engine

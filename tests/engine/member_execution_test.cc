// MemberExecution on its own: members of real collective programs run to completion against a
// network that delivers in order, sends wait for their receiver, and a message the program does
// not expect is refused.
#include "engine/member_execution.h"

#include <gtest/gtest.h>

#include <deque>
#include <vector>

#include "collectives/generate.h"

namespace etwire::engine {
namespace {

// Every member of one collective, with a FIFO network between them: a send is delivered and
// acknowledged when the test pumps it.
class Group {
 public:
  explicit Group(const collectives::CollectiveSpec& spec) : generator_(spec) {
    const uint32_t members = static_cast<uint32_t>(spec.ranks.size());
    programs_.resize(members);
    executions_.resize(members);
    arrived_.assign(members, false);
  }

  void arrive(uint32_t position) {
    generator_.generate_member(position, programs_[position]);
    executions_[position].reset(programs_[position], 0, position);
    arrived_[position] = true;
    Actions actions(*this, position);
    executions_[position].start(actions);
    for (uint32_t p = 0; p < executions_.size(); ++p) {
      if (p == position || !arrived_[p]) continue;
      Actions peer(*this, p);
      executions_[p].peer_arrived(position, peer);
    }
  }

  // Delivers and acknowledges the oldest message in flight; false when none is.
  bool pump() {
    if (in_flight_.empty()) return false;
    const auto [from, request] = in_flight_.front();
    in_flight_.pop_front();
    Actions receiver(*this, request.peer);
    EXPECT_TRUE(executions_[request.peer].data_arrived(from, request.qp, request.index, receiver));
    Actions sender(*this, from);
    executions_[from].send_completed(request.op, sender);
    return true;
  }

  MemberExecution& member(uint32_t position) { return executions_[position]; }
  size_t in_flight() const { return in_flight_.size(); }
  uint64_t sent() const { return sent_; }

 private:
  class Actions final : public MemberActions {
   public:
    Actions(Group& group, uint32_t self) : group_(group), self_(self) {}
    bool peer_ready(uint32_t peer) const override { return group_.arrived_[peer]; }
    void send(const SendRequest& request) override {
      EXPECT_TRUE(group_.arrived_[request.peer]);
      group_.in_flight_.emplace_back(self_, request);
      ++group_.sent_;
    }

   private:
    Group& group_;
    uint32_t self_;
  };

  collectives::ProgramGenerator generator_;
  std::vector<collectives::CollectiveProgram> programs_;
  std::vector<MemberExecution> executions_;
  std::vector<bool> arrived_;
  std::deque<std::pair<uint32_t, SendRequest>> in_flight_;
  uint64_t sent_ = 0;
};

collectives::CollectiveSpec ring_all_reduce(uint32_t members, uint32_t chunks) {
  collectives::CollectiveSpec spec;
  spec.collective = trace::CollectiveType::kAllReduce;
  for (uint32_t r = 0; r < members; ++r) spec.ranks.push_back(static_cast<int32_t>(r));
  spec.bytes = 1 << 20;
  spec.chunks = chunks;
  spec.algorithm = collectives::Algorithm::kRing;
  return spec;
}

TEST(MemberExecution, RingAllReduceRunsToCompletion) {
  const auto spec = ring_all_reduce(4, 3);
  Group group(spec);
  for (uint32_t p = 0; p < 4; ++p) group.arrive(p);
  while (group.pump()) {
  }
  // Ring all-reduce: 2(n-1) steps, each member sends one transfer per step and chunk.
  EXPECT_EQ(group.sent(), 4u * 2 * 3 * 3);
  for (uint32_t p = 0; p < 4; ++p) {
    EXPECT_TRUE(group.member(p).done()) << "member " << p;
    EXPECT_EQ(group.member(p).completed(), group.member(p).chunk_ops());
    EXPECT_EQ(group.member(p).receives_waiting(), 0u);
  }
}

TEST(MemberExecution, SendsWaitForTheirReceiverToJoin) {
  Group group(ring_all_reduce(2, 1));
  group.arrive(0);
  EXPECT_EQ(group.in_flight(), 0u);  // member 0's first send goes to member 1, not there yet
  EXPECT_FALSE(group.member(0).done());
  group.arrive(1);
  EXPECT_EQ(group.in_flight(), 2u);  // both first sends leave now
  while (group.pump()) {
  }
  EXPECT_TRUE(group.member(0).done());
  EXPECT_TRUE(group.member(1).done());
}

TEST(MemberExecution, AllToAllLocalCopiesCompleteAtOnce) {
  collectives::CollectiveSpec spec;
  spec.collective = trace::CollectiveType::kAllToAll;
  spec.ranks = {0, 1, 2};
  spec.bytes = 3 << 10;
  Group group(spec);
  group.arrive(0);
  // Its send to and receive from itself are done; the network ones wait.
  EXPECT_EQ(group.member(0).completed(), 2u);
  group.arrive(1);
  group.arrive(2);
  while (group.pump()) {
  }
  for (uint32_t p = 0; p < 3; ++p) EXPECT_TRUE(group.member(p).done());
  EXPECT_EQ(group.sent(), 6u);  // n(n-1) network transfers
}

TEST(MemberExecution, AMessageTheProgramDoesNotExpectIsRefused) {
  Group group(ring_all_reduce(2, 1));
  group.arrive(0);
  group.arrive(1);
  struct NoActions final : MemberActions {
    bool peer_ready(uint32_t) const override { return true; }
    void send(const SendRequest&) override {}
  } none;
  EXPECT_FALSE(group.member(1).data_arrived(0, 0, 1000, none));  // no 1000th receive
  EXPECT_FALSE(group.member(1).data_arrived(0, 7, 0, none));     // no QP 7
}

}  // namespace
}  // namespace etwire::engine

// MemberExecution on its own: members of real collective programs run to completion against a
// network that delivers in order, sends wait for their receiver, and a message the program does
// not expect is refused.
#include "engine/member_execution.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <string>

#include <vector>

#include "collectives/generate.h"

namespace etwire::engine {
namespace {

// Every member of one collective, with a FIFO network between them: a send is delivered and
// acknowledged when the test pumps it.
class Group {
 public:
  explicit Group(const collectives::CollectiveSpec& spec,
                 uint64_t part_ops = MemberExecution::kPartOps)
      : generator_(spec), part_ops_(part_ops) {
    const uint32_t members = static_cast<uint32_t>(spec.ranks.size());
    executions_.resize(members);
    arrived_.assign(members, false);
    finished_.assign(members, false);
  }

  void arrive(uint32_t position) {
    executions_[position].reset(generator_, position, part_ops_);
    log_.push_back("arrive " + std::to_string(position));
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
    const InFlight message = in_flight_.front();
    in_flight_.erase(in_flight_.begin());
    if (!message.delivered) deliver(message);
    acknowledge(message);
    observe();
    return true;
  }

  // Delivers the message in flight at `slot`, or acknowledges it when it has been delivered (an
  // acknowledgement leaves the sender's queue after the data reached the receiver), so that a
  // test can run a collective in any order the network could.
  void pump_at(size_t slot) {
    InFlight message = in_flight_.at(slot);
    in_flight_.erase(in_flight_.begin() + static_cast<ptrdiff_t>(slot));
    if (!message.delivered) {
      deliver(message);
      message.delivered = true;
      in_flight_.push_back(message);
    } else {
      acknowledge(message);
    }
    observe();
  }
  // Every arrival, send, delivery, acknowledgement and completion so far, in order.
  const std::vector<std::string>& log() const { return log_; }
  // The most chunk operations any member held at once.
  uint64_t most_held() const { return most_held_; }

  MemberExecution& member(uint32_t position) { return executions_[position]; }
  // Messages not yet delivered or acknowledged, in the order pump_at counts them.
  size_t in_flight() const { return in_flight_.size(); }
  uint64_t sent() const { return sent_; }

 private:
  struct InFlight {
    uint32_t from = 0;
    SendRequest request;
    bool delivered = false;
  };

  void deliver(const InFlight& message) {
    const SendRequest& request = message.request;
    Actions receiver(*this, request.peer);
    EXPECT_TRUE(
        executions_[request.peer].data_arrived(message.from, request.qp, request.index, receiver));
    log_.push_back("data " + std::to_string(message.from) + "->" + std::to_string(request.peer));
  }
  void acknowledge(const InFlight& message) {
    Actions sender(*this, message.from);
    executions_[message.from].send_completed(message.request.op, sender);
    log_.push_back("ack " + std::to_string(message.from) + " op " +
                   std::to_string(message.request.op));
  }

  void observe() {
    for (uint32_t p = 0; p < executions_.size(); ++p) {
      most_held_ = std::max(most_held_, executions_[p].held());
      if (executions_[p].done() && !finished_[p]) {
        finished_[p] = true;
        log_.push_back("done " + std::to_string(p));
      }
    }
  }

  class Actions final : public MemberActions {
   public:
    Actions(Group& group, uint32_t self) : group_(group), self_(self) {}
    bool peer_ready(uint32_t peer) const override { return group_.arrived_[peer]; }
    void send(const SendRequest& request) override {
      EXPECT_TRUE(group_.arrived_[request.peer]);
      group_.in_flight_.push_back({self_, request, false});
      group_.log_.push_back(fmt::format("send {}->{} op {} qp {} chunk {} bytes {} index {}", self_,
                                        request.peer, request.op, request.qp, request.chunk,
                                        request.bytes, request.index));
      ++group_.sent_;
    }

   private:
    Group& group_;
    uint32_t self_;
  };

  collectives::ProgramGenerator generator_;
  uint64_t part_ops_;
  std::vector<MemberExecution> executions_;
  std::vector<bool> arrived_;
  std::vector<InFlight> in_flight_;
  std::vector<bool> finished_;
  std::vector<std::string> log_;
  uint64_t most_held_ = 0;
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

// One run of `spec` with members arriving in a shuffled order and the network delivering and
// acknowledging in an order drawn from `seed`: the group's log.
std::vector<std::string> shuffled_run(const collectives::CollectiveSpec& spec, uint64_t part_ops,
                                      uint64_t seed) {
  Group group(spec, part_ops);
  std::mt19937_64 rng(seed);
  std::vector<uint32_t> order(spec.ranks.size());
  for (uint32_t p = 0; p < order.size(); ++p) order[p] = p;
  std::shuffle(order.begin(), order.end(), rng);
  for (uint32_t position : order) {
    group.arrive(position);
    for (uint64_t pumps = rng() % 8; pumps > 0 && group.in_flight() > 0; --pumps) {
      group.pump_at(rng() % group.in_flight());
    }
  }
  while (group.in_flight() > 0) group.pump_at(rng() % group.in_flight());
  for (uint32_t p = 0; p < order.size(); ++p) {
    EXPECT_TRUE(group.member(p).done()) << "member " << p << " part_ops " << part_ops;
  }
  return group.log();
}

// A program emitted in parts runs exactly as the whole program would: the same sends, with the
// same numbers, at the same moments, whatever order the network takes.
TEST(MemberExecution, AProgramInPartsRunsExactlyAsTheWholeProgram) {
  struct Case {
    collectives::Algorithm algorithm;
    trace::CollectiveType type;
    uint32_t members;
    uint32_t per_host;
    uint32_t channels;
    uint32_t chunks;
    uint32_t qps;
    uint64_t bytes = 1 << 20;
  };
  using collectives::Algorithm;
  using trace::CollectiveType;
  const Case cases[] = {
      {Algorithm::kRing, CollectiveType::kAllReduce, 16, 1, 0, 2, 1},
      {Algorithm::kRing, CollectiveType::kAllReduce, 7, 1, 0, 3, 2},
      {Algorithm::kBidirectionalRing, CollectiveType::kAllReduce, 9, 1, 0, 2, 1},
      {Algorithm::kRing, CollectiveType::kReduceScatter, 8, 1, 0, 1, 3},
      {Algorithm::kRing, CollectiveType::kAllGather, 6, 1, 0, 2, 1},
      {Algorithm::kRing, CollectiveType::kAllReduce, 12, 4, 3, 2, 1},  // rails and relays
      // Fewer bytes than members: empty blocks, so steps (and parts) without operations.
      {Algorithm::kRing, CollectiveType::kAllReduce, 7, 1, 0, 1, 1, 3},
      {Algorithm::kDirect, CollectiveType::kAllToAll, 5, 1, 0, 1, 1},
      {Algorithm::kDoubleBinaryTree, CollectiveType::kAllReduce, 8, 1, 0, 3, 1},
  };
  for (const Case& c : cases) {
    collectives::CollectiveSpec spec = ring_all_reduce(c.members, c.chunks);
    spec.algorithm = c.algorithm;
    spec.collective = c.type;
    spec.ranks_per_host = c.per_host;
    if (c.channels > 0) spec.channels = c.channels;
    spec.qps = c.qps;
    spec.bytes = c.bytes;
    for (uint64_t seed : {1u, 2u, 3u}) {
      const std::vector<std::string> whole = shuffled_run(spec, UINT64_MAX, seed);
      for (uint64_t part_ops : {0u, 1u, 4u, 9u}) {  // 0: a part a step
        const std::vector<std::string> parts = shuffled_run(spec, part_ops, seed);
        const auto [differs, _] =
            std::mismatch(whole.begin(), whole.end(), parts.begin(), parts.end());
        ASSERT_TRUE(whole == parts)
            << "algorithm " << static_cast<int>(c.algorithm) << " members " << c.members << " seed "
            << seed << " part_ops " << part_ops << ": first difference at line "
            << (differs - whole.begin()) << ": whole program \""
            << (differs != whole.end() ? *differs : "(end)") << "\"";
      }
    }
  }
}

// A ring member holds the few parts its work spans, not its program: over an in-order network the
// members of a 32-member ring all-reduce (124 operations each) hold at most a handful of steps.
TEST(MemberExecution, ARingMemberHoldsAFewPartsOfItsProgram) {
  const auto spec = ring_all_reduce(32, 1);
  for (uint64_t part_ops : {UINT64_MAX, uint64_t{4}}) {
    Group group(spec, part_ops);
    for (uint32_t p = 0; p < 32; ++p) group.arrive(p);
    while (group.pump()) {
    }
    for (uint32_t p = 0; p < 32; ++p) ASSERT_TRUE(group.member(p).done());
    EXPECT_EQ(group.member(0).chunk_ops(), 4u * 31);
    if (part_ops == UINT64_MAX) {
      EXPECT_EQ(group.most_held(), 4u * 31);
    } else {
      EXPECT_LE(group.most_held(), 12u);
    }
  }
}

}  // namespace
}  // namespace etwire::engine

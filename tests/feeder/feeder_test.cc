// Core feeder behaviour: dependency order, windows, forward references, eviction, policies.
#include "trace/feeder/feeder.h"

#include <gtest/gtest.h>

#include <set>
#include <vector>

#include "tests/feeder/drain.h"
#include "tests/feeder/vector_source.h"

namespace etwire::feeder {
namespace {

using testing::drain;
using testing::make_node;
using testing::source_of;
using trace::NodeType;
using Ids = std::vector<uint64_t>;

FeederOptions with_window(uint32_t window, Policy policy = Policy::kFifo) {
  FeederOptions options;
  options.window = window;
  options.policy = policy;
  return options;
}

TEST(Feeder, EmptyFileIsDoneAfterFirstNext) {
  Feeder feeder(source_of({}));
  EXPECT_FALSE(feeder.next().has_value());
  EXPECT_TRUE(feeder.done());
  EXPECT_EQ(feeder.in_flight(), 0u);
  EXPECT_EQ(feeder.stats().nodes_read, 0u);
  EXPECT_EQ(feeder.path(), "mem.0.et");
}

TEST(Feeder, ChainIssuesInDependencyOrderAndCountsEverything) {
  Feeder feeder(source_of({make_node(1), make_node(2, {1}), make_node(3, {2})}));
  EXPECT_EQ(drain(feeder), (Ids{1, 2, 3}));
  const FeederStats& stats = feeder.stats();
  EXPECT_EQ(stats.nodes_read, 3u);
  EXPECT_EQ(stats.nodes_issued, 3u);
  EXPECT_EQ(stats.nodes_completed, 3u);
  EXPECT_EQ(stats.nodes_filtered, 0u);
  EXPECT_EQ(stats.peak_unresolved, 0u);
}

TEST(Feeder, ChildWaitsUntilItsParentCompletes) {
  Feeder feeder(source_of({make_node(1), make_node(2, {1})}));
  std::optional<IssuedNode> first = feeder.next();
  ASSERT_TRUE(first);
  EXPECT_EQ(first->node->id, 1u);
  EXPECT_FALSE(feeder.next().has_value()) << "node 2 must wait for node 1";
  EXPECT_EQ(feeder.in_flight(), 1u);
  EXPECT_FALSE(feeder.done());
  feeder.complete(*first);
  std::optional<IssuedNode> second = feeder.next();
  ASSERT_TRUE(second);
  EXPECT_EQ(second->node->id, 2u);
  feeder.complete(*second);
  EXPECT_FALSE(feeder.next().has_value());
  EXPECT_TRUE(feeder.done());
}

TEST(Feeder, ForwardReferenceWaitsForTheParentReadLater) {
  // The child comes first in the file and names a parent two records on.
  Feeder feeder(source_of({make_node(10, {30}), make_node(20), make_node(30)}), with_window(1));
  EXPECT_EQ(drain(feeder), (Ids{20, 30, 10}));
  EXPECT_EQ(feeder.stats().peak_unresolved, 1u);
}

TEST(Feeder, WindowGrowsOnlyWhenNothingElseCanRun) {
  // Node 0 waits for node 5; nodes 1..4 are independent. With a window of 1 the feeder reads one
  // node past the window, issues it, and so on: it never needs to hold more than two nodes.
  std::vector<trace::TraceNode> nodes{make_node(0, {5})};
  for (uint64_t id = 1; id < 100; ++id) nodes.push_back(make_node(id));
  Feeder feeder(source_of(nodes), with_window(1));
  Ids order = drain(feeder);
  EXPECT_EQ(order.size(), 100u);
  EXPECT_EQ(order[5], 0u) << "node 0 right after its parent 5";
  EXPECT_EQ(feeder.stats().peak_live_nodes, 2u);
}

TEST(Feeder, EvictedParentIsRecognisedAsCompleted) {
  // With a window of 1, node 1 is issued, completed and forgotten before node 2 is read; node 2
  // must not wait for it.
  Feeder feeder(source_of({make_node(1), make_node(2, {1}), make_node(3, {1, 2})}), with_window(1));
  EXPECT_EQ(drain(feeder), (Ids{1, 2, 3}));
  EXPECT_EQ(feeder.stats().peak_live_nodes, 1u);
  EXPECT_EQ(feeder.stats().peak_unresolved, 0u);
}

TEST(Feeder, MemoryStaysWithinTheWindowOnALongTrace) {
  std::vector<trace::TraceNode> nodes;
  for (uint64_t id = 0; id < 5000; ++id) {
    nodes.push_back(id == 0 ? make_node(id) : make_node(id, {id - 1}));
  }
  Feeder feeder(source_of(nodes), with_window(64));
  EXPECT_EQ(drain(feeder, 8).size(), 5000u);
  EXPECT_EQ(feeder.stats().peak_live_nodes, 64u);
}

TEST(Feeder, IndependentNodesRespectTheWindowWithManyInFlight) {
  std::vector<trace::TraceNode> nodes;
  for (uint64_t id = 0; id < 1000; ++id) nodes.push_back(make_node(id));
  Feeder feeder(source_of(nodes), with_window(16));
  Ids order = drain(feeder, 64);
  EXPECT_EQ(order.size(), 1000u);
  EXPECT_LE(feeder.stats().peak_live_nodes, 16u);
}

TEST(Feeder, NeverIssuesANodeTwiceAcrossWindowRefills) {
  // Many in flight while the window is refilled over and over: every node exactly once.
  std::vector<trace::TraceNode> nodes;
  for (uint64_t id = 0; id < 20000; ++id) {
    nodes.push_back(id % 7 == 0 || id < 3 ? make_node(id) : make_node(id, {id - 3}));
  }
  Feeder feeder(source_of(nodes), with_window(32));
  std::mt19937_64 rng(7);
  Ids order = drain(feeder, 64, &rng);
  std::set<uint64_t> unique(order.begin(), order.end());
  EXPECT_EQ(order.size(), 20000u);
  EXPECT_EQ(unique.size(), 20000u);
}

TEST(Feeder, FifoBreaksTiesByFileOrder) {
  // Children 5, 3, 4 (in that file order) all become ready when node 0 completes.
  Feeder feeder(source_of(
      {make_node(0), make_node(5, {0}), make_node(3, {0}), make_node(4, {0}), make_node(9)}));
  EXPECT_EQ(drain(feeder), (Ids{0, 9, 5, 3, 4}));
}

TEST(Feeder, FifoIssuesInTheOrderNodesBecameReady) {
  // Node 2 becomes ready only when 1 completes; node 3 was ready from the start.
  Feeder feeder(source_of({make_node(1), make_node(2, {1}), make_node(3)}));
  EXPECT_EQ(drain(feeder), (Ids{1, 3, 2}));
}

TEST(Feeder, StartTimePolicyIssuesEarliestRecordedStartFirst) {
  Feeder feeder(
      source_of({make_node(1, {}, NodeType::kComp, 300), make_node(2, {}, NodeType::kComp, 100),
                 make_node(3, {}, NodeType::kComp, 200), make_node(4, {}, NodeType::kComp, 100),
                 make_node(5, {2}, NodeType::kComp, 50)}),
      with_window(16, Policy::kStartTime));
  // 5 starts earliest but waits for 2; ties at 100 go by file order (2 before 4).
  std::optional<IssuedNode> first = feeder.next();
  ASSERT_TRUE(first);
  EXPECT_EQ(first->node->id, 2u);
  feeder.complete(*first);
  EXPECT_EQ(drain(feeder), (Ids{5, 4, 3, 1}));
}

TEST(Feeder, CommFirstPolicyPrefersCommunicationNodes) {
  Feeder feeder(
      source_of({make_node(1, {}, NodeType::kComp), make_node(2, {}, NodeType::kCommColl),
                 make_node(3, {}, NodeType::kMemLoad), make_node(4, {}, NodeType::kCommSend),
                 make_node(5, {}, NodeType::kCommRecv), make_node(6, {1}, NodeType::kComp)}),
      with_window(16, Policy::kCommFirst));
  EXPECT_EQ(drain(feeder), (Ids{2, 4, 5, 1, 3, 6}));
}

TEST(Feeder, CommFirstWithinReadyNodesOnly) {
  // The comm node depends on a compute node, so the compute node goes first.
  Feeder feeder(
      source_of({make_node(1, {}, NodeType::kComp), make_node(2, {1}, NodeType::kCommColl),
                 make_node(3, {}, NodeType::kComp)}),
      with_window(16, Policy::kCommFirst));
  EXPECT_EQ(drain(feeder), (Ids{1, 2, 3}));
}

TEST(Feeder, SparseAndDescendingIdsAreFine) {
  Feeder sparse(source_of({make_node(1000000), make_node(7, {1000000}), make_node(UINT64_MAX, {7}),
                           make_node(0, {UINT64_MAX})}),
                with_window(1));
  EXPECT_EQ(drain(sparse), (Ids{1000000, 7, UINT64_MAX, 0}));
  Feeder descending(source_of({make_node(3), make_node(2, {3}), make_node(1, {2, 3})}),
                    with_window(1));
  EXPECT_EQ(drain(descending), (Ids{3, 2, 1}));
}

TEST(Feeder, RepeatedParentInDataDepsIsHarmless) {
  Feeder feeder(
      source_of({make_node(1), make_node(2, {1, 1}), make_node(3, {4, 4}), make_node(4)}));
  EXPECT_EQ(drain(feeder), (Ids{1, 4, 2, 3}));
}

TEST(Feeder, ReverseChainForcesTheWholeChainIntoMemory) {
  // Each node waits for the next one in the file: nothing is ready until the last is read.
  std::vector<trace::TraceNode> nodes;
  for (uint64_t id = 0; id < 5; ++id) nodes.push_back(make_node(id, {id + 1}));
  nodes.push_back(make_node(5));
  Feeder feeder(source_of(nodes), with_window(1));
  EXPECT_EQ(drain(feeder), (Ids{5, 4, 3, 2, 1, 0}));
  EXPECT_EQ(feeder.stats().peak_live_nodes, 6u);
  EXPECT_EQ(feeder.stats().peak_unresolved, 1u);
}

TEST(Feeder, CompletingANodeNotInFlightIsALogicError) {
  Feeder feeder(source_of({make_node(1), make_node(2)}));
  std::optional<IssuedNode> issued = feeder.next();
  ASSERT_TRUE(issued);
  feeder.complete(*issued);
  EXPECT_THROW(feeder.complete(*issued), std::logic_error);
  EXPECT_THROW(feeder.complete(IssuedNode{999, nullptr}), std::logic_error);
}

TEST(Feeder, ZeroWindowActsAsOne) {
  Feeder feeder(source_of({make_node(1), make_node(2, {1}), make_node(3)}), with_window(0));
  EXPECT_EQ(drain(feeder), (Ids{1, 2, 3}));
  EXPECT_EQ(feeder.stats().peak_live_nodes, 1u);
}

TEST(Feeder, RejectsAMissingSource) {
  EXPECT_THROW(Feeder(nullptr), std::invalid_argument);
}

TEST(Policy, NamesRoundTripAndParseLeniently) {
  for (Policy policy : {Policy::kFifo, Policy::kStartTime, Policy::kCommFirst}) {
    EXPECT_EQ(parse_policy(policy_name(policy)), policy);
  }
  EXPECT_EQ(parse_policy("START_TIME"), Policy::kStartTime);
  EXPECT_EQ(parse_policy("commfirst"), Policy::kCommFirst);
  EXPECT_EQ(parse_policy("FIFO"), Policy::kFifo);
  EXPECT_FALSE(parse_policy("lifo").has_value());
  EXPECT_FALSE(parse_policy("").has_value());
}

}  // namespace
}  // namespace etwire::feeder

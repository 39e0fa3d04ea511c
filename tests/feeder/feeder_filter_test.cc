// Partial replay: nodes the filter drops complete inside the feeder as soon as they are ready, so
// the nodes that depend on them still run, in dependency order.
#include <gtest/gtest.h>

#include <vector>

#include "tests/feeder/drain.h"
#include "tests/feeder/small_stack.h"
#include "tests/feeder/vector_source.h"
#include "trace/feeder/feeder.h"
#include "trace/feeder/node_filter.h"

namespace etwire::feeder {
namespace {

using testing::drain;
using testing::make_node;
using testing::source_of;
using trace::NodeType;
using Ids = std::vector<uint64_t>;

FeederOptions filtered_by(NodeFilter filter, uint32_t window = 4096) {
  FeederOptions options;
  options.filter = std::move(filter);
  options.window = window;
  return options;
}

trace::TraceNode in_group(trace::TraceNode node, std::optional<std::string> pg_name) {
  node.comm.pg_name = std::move(pg_name);
  return node;
}

TEST(FeederFilter, CommOnlyKeepsDependencyOrderThroughDroppedNodes) {
  // comp 1 -> coll 2 -> comp 3 -> send 4; comp 5 alone; recv 6 after comp 5.
  Feeder feeder(
      source_of({make_node(1, {}, NodeType::kComp), make_node(2, {1}, NodeType::kCommColl),
                 make_node(3, {2}, NodeType::kComp), make_node(4, {3}, NodeType::kCommSend),
                 make_node(5, {}, NodeType::kComp), make_node(6, {5}, NodeType::kCommRecv)}),
      filtered_by(NodeFilter::comm_only()));
  std::optional<IssuedNode> coll = feeder.next();
  ASSERT_TRUE(coll);
  EXPECT_EQ(coll->node->id, 2u);
  std::optional<IssuedNode> recv = feeder.next();
  ASSERT_TRUE(recv);
  EXPECT_EQ(recv->node->id, 6u);
  EXPECT_FALSE(feeder.next().has_value()) << "the send waits for the collective through comp 3";
  feeder.complete(*coll);
  feeder.complete(*recv);
  EXPECT_EQ(drain(feeder), (Ids{4}));
  EXPECT_EQ(feeder.stats().nodes_filtered, 3u);
  EXPECT_EQ(feeder.stats().nodes_issued, 3u);
  EXPECT_EQ(feeder.stats().nodes_completed, 3u);
  EXPECT_EQ(feeder.stats().nodes_read, 6u);
}

TEST(FeederFilter, IdRangeKeepsOnlyThoseIds) {
  NodeFilter filter;
  filter.min_id = 3;
  filter.max_id = 5;
  std::vector<trace::TraceNode> nodes;
  for (uint64_t id = 0; id < 8; ++id)
    nodes.push_back(id == 0 ? make_node(id) : make_node(id, {id - 1}));
  Feeder feeder(source_of(nodes), filtered_by(filter, 2));
  EXPECT_EQ(drain(feeder), (Ids{3, 4, 5}));
  EXPECT_EQ(feeder.stats().nodes_filtered, 5u);
}

TEST(FeederFilter, DroppedParentReadAfterItsChildStillReleasesIt) {
  NodeFilter filter;
  filter.types.reset(static_cast<size_t>(NodeType::kComp));
  Feeder feeder(
      source_of({make_node(1, {2}, NodeType::kCommColl), make_node(2, {}, NodeType::kComp)}),
      filtered_by(filter, 1));
  EXPECT_EQ(drain(feeder), (Ids{1}));
  EXPECT_EQ(feeder.stats().nodes_filtered, 1u);
}

TEST(FeederFilter, DroppingEverythingIssuesNothing) {
  NodeFilter filter;
  filter.types.reset();
  std::vector<trace::TraceNode> nodes;
  for (uint64_t id = 0; id < 100; ++id)
    nodes.push_back(make_node(id, id ? std::vector<uint64_t>{id - 1} : std::vector<uint64_t>{}));
  Feeder feeder(source_of(nodes), filtered_by(filter, 8));
  EXPECT_FALSE(feeder.next().has_value());
  EXPECT_TRUE(feeder.done());
  EXPECT_EQ(feeder.stats().nodes_filtered, 100u);
  EXPECT_EQ(feeder.stats().nodes_issued, 0u);
  EXPECT_LE(feeder.stats().peak_live_nodes, 8u);
}

TEST(FeederFilter, LongChainOfDroppedNodesCompletesWithoutRecursion) {
  // A reverse chain forces the whole chain into memory; when its last node arrives the dropped
  // nodes complete one after another. Run on a small stack to prove nothing recurses per node.
  constexpr uint64_t kLength = 50000;
  uint64_t filtered = 0;
  testing::run_on_small_stack([&] {
    NodeFilter filter;
    filter.types.reset(static_cast<size_t>(NodeType::kComp));
    auto source =
        std::make_unique<testing::GeneratedSource>([](uint64_t position, trace::TraceNode& out) {
          if (position > kLength) return false;
          out.id = position;
          out.type = position == kLength ? NodeType::kCommColl : NodeType::kComp;
          if (position + 1 < kLength) out.data_deps.push_back(position + 1);  // reverse chain
          if (position == kLength) out.data_deps.push_back(0);  // the collective after it all
          return true;
        });
    Feeder feeder(std::move(source), filtered_by(filter, 16));
    EXPECT_EQ(drain(feeder), (Ids{kLength}));
    EXPECT_EQ(feeder.stats().peak_live_nodes, kLength);
    filtered = feeder.stats().nodes_filtered;
  });
  EXPECT_EQ(filtered, kLength);
}

TEST(NodeFilter, KeepsEverythingByDefault) {
  NodeFilter filter;
  EXPECT_TRUE(filter.keeps_everything());
  EXPECT_TRUE(filter.keeps(make_node(5, {}, NodeType::kMemStore)));
  EXPECT_FALSE(NodeFilter::comm_only().keeps_everything());
}

TEST(NodeFilter, CommOnlyKeepsSendRecvAndCollectives) {
  NodeFilter filter = NodeFilter::comm_only();
  EXPECT_TRUE(filter.keeps(make_node(1, {}, NodeType::kCommSend)));
  EXPECT_TRUE(filter.keeps(make_node(1, {}, NodeType::kCommRecv)));
  EXPECT_TRUE(filter.keeps(make_node(1, {}, NodeType::kCommColl)));
  EXPECT_FALSE(filter.keeps(make_node(1, {}, NodeType::kComp)));
  EXPECT_FALSE(filter.keeps(make_node(1, {}, NodeType::kMemLoad)));
}

TEST(NodeFilter, ProcessGroupsFilterOnlyCommNodes) {
  NodeFilter filter;
  filter.process_groups = {"1", ""};
  EXPECT_TRUE(filter.keeps(in_group(make_node(1, {}, NodeType::kCommColl), "1")));
  EXPECT_FALSE(filter.keeps(in_group(make_node(1, {}, NodeType::kCommColl), "2")));
  EXPECT_TRUE(filter.keeps(in_group(make_node(1, {}, NodeType::kCommColl), std::nullopt)))
      << "\"\" stands for an absent pg_name";
  EXPECT_TRUE(filter.keeps(make_node(1, {}, NodeType::kComp))) << "compute has no group";
  EXPECT_FALSE(filter.keeps_everything());
}

TEST(NodeFilter, IdRangeIsInclusive) {
  NodeFilter filter;
  filter.min_id = 10;
  filter.max_id = 20;
  EXPECT_FALSE(filter.keeps(make_node(9)));
  EXPECT_TRUE(filter.keeps(make_node(10)));
  EXPECT_TRUE(filter.keeps(make_node(20)));
  EXPECT_FALSE(filter.keeps(make_node(21)));
}

}  // namespace
}  // namespace etwire::feeder

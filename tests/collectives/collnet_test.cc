// CollNet: the in-network all-reduce whose switches reduce (aggregation_tree.h). Every member
// ends with the sum through any tree; members send a slice up and take it back, nothing more
// leaves the server; the aggregation nodes reduce only as high as the slice's owners need.
#include <gtest/gtest.h>

#include "collectives/aggregation_tree.h"
#include "collectives/generate.h"
#include "collectives/traffic_stats.h"
#include "collectives/verify.h"
#include "tests/collectives/test_groups.h"

namespace etwire::collectives {
namespace {

using trace::CollectiveType;

CollectiveSpec collnet(uint32_t n, uint32_t per_host, uint64_t bytes) {
  CollectiveSpec spec;
  spec.collective = CollectiveType::kAllReduce;
  spec.algorithm = Algorithm::kCollNet;
  spec.ranks = testing::contiguous_group(n);
  spec.ranks_per_host = per_host;
  spec.bytes = bytes;
  return spec;
}

// A leaf per rail (local index) under one top switch.
std::shared_ptr<const AggregationTree> rail_tree(uint32_t ranks, uint32_t per_host) {
  auto tree = std::make_shared<AggregationTree>();
  tree->parent.assign(per_host, per_host);
  tree->parent.push_back(kNoAggregator);
  for (uint32_t r = 0; r < ranks; ++r) tree->leaf_of_rank.push_back(r % per_host);
  return tree;
}

TEST(CollNet, EveryMemberEndsWithTheSum) {
  uint64_t seed = 5;
  for (uint32_t n : {2u, 3u, 7u, 16u, 24u, 40u, 64u}) {
    for (uint32_t per_host : {1u, 3u, 4u, 8u}) {
      ++seed;
      CollectiveSpec spec = collnet(n, per_host, 29 * n + seed % 11);
      ASSERT_EQ(testing::verify_varied(spec, seed), "");
      // Without a tree: one switch under every rank.
      spec.aggregation = nullptr;
      ProgramGenerator generator(spec);
      ASSERT_EQ(verify(generator.spec(), generator.generate()), "") << n << " " << per_host;
    }
  }
}

TEST(CollNet, EachNicSendsItsSliceUpAndTakesTheSumBack) {
  // Two servers of eight on a rail-optimised fabric: GPU j owns slice j (F/8), and both owners
  // of slice j hang off leaf j, which reduces it alone: nothing climbs to the top switch.
  const uint64_t bytes = uint64_t{8} * 2 * 4096;
  CollectiveSpec spec = collnet(16, 8, bytes);
  spec.aggregation = rail_tree(16, 8);
  ProgramGenerator generator(spec);
  const CollectiveProgram program = generator.generate();
  ASSERT_EQ(verify(generator.spec(), program), "");
  ASSERT_EQ(program.participants(), 16u + 9u);
  const std::vector<MemberTraffic> traffic = member_traffic(program, 8);
  for (uint32_t m = 0; m < 16; ++m) {
    EXPECT_EQ(traffic[m].network_bytes_sent, bytes / 8) << "member " << m;
    for (uint32_t i = 0; i < program.ops(m); ++i) {
      const OpView op = program.op(m, i);
      if (program.is_member(op.peer)) continue;
      EXPECT_EQ(op.peer, 16 + m % 8) << "member " << m << " sends to its rail's leaf";
    }
  }
  for (uint32_t leaf = 0; leaf < 8; ++leaf) {
    EXPECT_EQ(traffic[16 + leaf].network_bytes_sent, 2 * bytes / 8) << "leaf " << leaf;
  }
  EXPECT_EQ(program.ops(16 + 8), 0u) << "the top switch has nothing to do";
}

TEST(CollNet, SlicesClimbToTheLowestSwitchAboveEveryOwner) {
  // Four servers of one rank, each on its own leaf; leaves 0-1 under switch 4, 2-3 under 5, both
  // under 6. Every leaf passes F up and down; 4 and 5 receive 2F from below and F from above,
  // and send F up and 2F down; 6 receives 2F and sends 2F.
  const uint64_t bytes = 4096;
  CollectiveSpec spec = collnet(4, 1, bytes);
  auto tree = std::make_shared<AggregationTree>();
  tree->parent = {4, 4, 5, 5, 6, 6, kNoAggregator};
  tree->leaf_of_rank = {0, 1, 2, 3};
  spec.aggregation = tree;
  ProgramGenerator generator(spec);
  const CollectiveProgram program = generator.generate();
  ASSERT_EQ(verify(generator.spec(), program), "");
  const std::vector<MemberTraffic> traffic = member_traffic(program, 1);
  for (uint32_t k = 0; k < 4; ++k) {
    EXPECT_EQ(traffic[k].network_bytes_sent, bytes) << "member " << k;
    EXPECT_EQ(traffic[4 + k].network_bytes_sent, 2 * bytes) << "leaf " << k;  // up + down
    EXPECT_EQ(traffic[4 + k].bytes_received, 2 * bytes) << "leaf " << k;
  }
  EXPECT_EQ(traffic[8].network_bytes_sent, 3 * bytes);
  EXPECT_EQ(traffic[9].network_bytes_sent, 3 * bytes);
  EXPECT_EQ(traffic[10].network_bytes_sent, 2 * bytes);
  EXPECT_EQ(traffic[10].bytes_received, 2 * bytes);

  // Ranks 0 and 1 alone: switch 4 is their root, 5 and 6 stay idle.
  spec.ranks = {0, 1};
  ProgramGenerator pair(spec);
  const CollectiveProgram two = pair.generate();
  ASSERT_EQ(verify(pair.spec(), two), "");
  EXPECT_GT(two.ops(2 + 4), 0u);
  EXPECT_EQ(two.ops(2 + 5), 0u);
  EXPECT_EQ(two.ops(2 + 6), 0u);
}

TEST(CollNet, ReduceSliceFindsTheLowestCommonSwitch) {
  AggregationTree tree;
  tree.parent = {4, 4, 5, 5, 6, 6, kNoAggregator};
  tree.leaf_of_rank = {0, 0, 1, 2, 3};
  const std::vector<int32_t> ranks = {0, 1, 2, 3, 4};
  const std::vector<uint32_t> first_pair = {0, 1};
  EXPECT_EQ(reduce_slice(tree, ranks, first_pair).root, 0u);
  const std::vector<uint32_t> left = {0, 2};
  const SliceReduction l = reduce_slice(tree, ranks, left);
  EXPECT_EQ(l.root, 4u);
  EXPECT_EQ(l.node_children[4], (std::vector<uint32_t>{0, 1}));
  EXPECT_FALSE(l.takes_part(5));
  const std::vector<uint32_t> all = {4, 0, 3, 2, 1};
  const SliceReduction a = reduce_slice(tree, ranks, all);
  EXPECT_EQ(a.root, 6u);
  EXPECT_EQ(a.member_children[0], (std::vector<uint32_t>{0, 1}));
  EXPECT_EQ(a.node_children[6], (std::vector<uint32_t>{4, 5}));
}

TEST(CollNet, RefusesATreeThatIsNotOne) {
  CollectiveSpec spec = collnet(4, 2, 64);
  auto tree = std::make_shared<AggregationTree>();
  tree->parent = {1, 0};
  tree->leaf_of_rank = {0, 0, 1, 1};
  spec.aggregation = tree;
  EXPECT_THROW(
      {
        try {
          resolve(spec);
        } catch (const SpecError& e) {
          EXPECT_STREQ(e.what(), "aggregation: 0 roots; a tree has one");
          throw;
        }
      },
      SpecError);
  tree->parent = {kNoAggregator, 2, 3, 1};
  EXPECT_EQ(tree->check(), "node 1: its parents loop");
  tree->parent = {kNoAggregator, 7};
  EXPECT_EQ(tree->check(), "node 1: parent 7 is not one of the 2 nodes");
  tree->parent = {kNoAggregator, 0};
  tree->leaf_of_rank = {0, 0, 1};
  try {
    resolve(spec);
    ADD_FAILURE() << "rank 3 has no leaf";
  } catch (const SpecError& e) {
    EXPECT_STREQ(e.what(), "aggregation: rank 3 hangs off no switch of the tree");
  }
  tree->leaf_of_rank = {0, 0, 1, 5};
  EXPECT_EQ(tree->check(), "rank 3: leaf 5 is not one of the 2 nodes");
}

}  // namespace
}  // namespace etwire::collectives

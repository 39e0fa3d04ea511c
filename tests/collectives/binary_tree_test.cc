#include "collectives/binary_tree.h"

#include <gtest/gtest.h>

namespace etwire::collectives {
namespace {

// Every member reaches the root, and parent and child links agree.
void expect_spanning(const BinaryTree& tree, uint32_t n) {
  ASSERT_EQ(tree.parent.size(), n);
  for (uint32_t p = 0; p < n; ++p) {
    uint32_t hops = 0;
    for (uint32_t at = p; at != tree.root; at = tree.parent[at]) {
      ASSERT_NE(tree.parent[at], kNoMember) << "n=" << n << " p=" << p;
      ASSERT_LE(++hops, n);
    }
    for (uint32_t child : tree.children[p]) {
      if (child != kNoMember) {
        EXPECT_EQ(tree.parent[child], p);
      }
    }
    if (p != tree.root) {
      const auto& siblings = tree.children[tree.parent[p]];
      EXPECT_TRUE(siblings[0] == p || siblings[1] == p);
    }
  }
  EXPECT_EQ(tree.parent[tree.root], kNoMember);
}

bool is_leaf(const BinaryTree& tree, uint32_t p) {
  return tree.children[p][0] == kNoMember && tree.children[p][1] == kNoMember;
}

TEST(BinaryTree, BothTreesSpanEveryGroupSize) {
  for (uint32_t n = 1; n <= 200; ++n) {
    const BinaryTree first = in_order_tree(n);
    expect_spanning(first, n);
    expect_spanning(complementary_tree(first), n);
  }
}

TEST(BinaryTree, InnerNodesOfOneTreeAreLeavesOfTheOther) {
  for (uint32_t n = 2; n <= 200; ++n) {
    const BinaryTree first = in_order_tree(n);
    const BinaryTree second = complementary_tree(first);
    uint32_t inner_in_both = 0;
    for (uint32_t p = 0; p < n; ++p) inner_in_both += !is_leaf(first, p) && !is_leaf(second, p);
    // Mirroring an even-sized tree is exact; shifting an odd one misses at most one member.
    EXPECT_LE(inner_in_both, n % 2 == 0 ? 0u : 1u) << n;
  }
}

}  // namespace
}  // namespace etwire::collectives

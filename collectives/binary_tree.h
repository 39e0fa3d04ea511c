// The two trees of a double binary tree over member positions 0..n-1.
//
// The first is an in-order binary tree: with j = position + 1, j's level is its number of
// trailing zero bits, leaves are the odd j (the even positions) and the root is the largest power
// of two <= n; links that would pass through j > n skip to the nearest node that exists. The
// second maps every position through a permutation that turns the first tree's leaves into
// inner nodes: the mirror p -> n-1-p when n is even, the shift p -> p+1 (mod n) when n is odd.
// So nearly every member is a leaf in one tree and inner in the other, and each tree carrying
// half the data keeps every member's traffic near 2x the buffer (docs/collectives.md).
#pragma once

#include <array>
#include <cstdint>
#include <vector>

namespace etwire::collectives {

inline constexpr uint32_t kNoMember = UINT32_MAX;

struct BinaryTree {
  uint32_t root = 0;
  std::vector<uint32_t> parent;                   // kNoMember for the root
  std::vector<std::array<uint32_t, 2>> children;  // kNoMember where absent
};

BinaryTree in_order_tree(uint32_t members);
BinaryTree complementary_tree(const BinaryTree& first);

}  // namespace etwire::collectives

#include "collectives/binary_tree.h"

#include <bit>

namespace etwire::collectives {

namespace {

// Parent of node j in the infinite in-order tree over 1, 2, 3, ...
uint64_t perfect_parent(uint64_t j) {
  const uint64_t low = j & (~j + 1);  // 2^level
  return (j & (low << 1)) != 0 ? j - low : j + low;
}

}  // namespace

BinaryTree in_order_tree(uint32_t members) {
  BinaryTree tree;
  tree.parent.assign(members, kNoMember);
  tree.children.assign(members, {kNoMember, kNoMember});
  if (members == 0) return tree;
  const uint64_t n = members;
  const uint64_t root = std::bit_floor(n);
  tree.root = static_cast<uint32_t>(root - 1);
  for (uint64_t j = 1; j <= n; ++j) {
    if (j == root) continue;
    uint64_t up = perfect_parent(j);
    while (up > n) up = perfect_parent(up);  // ancestors beyond n do not exist: skip them
    const auto child = static_cast<uint32_t>(j - 1);
    const auto parent = static_cast<uint32_t>(up - 1);
    tree.parent[child] = parent;
    tree.children[parent][j < up ? 0 : 1] = child;
  }
  return tree;
}

BinaryTree complementary_tree(const BinaryTree& first) {
  const auto n = static_cast<uint32_t>(first.parent.size());
  BinaryTree tree;
  tree.parent.assign(n, kNoMember);
  tree.children.assign(n, {kNoMember, kNoMember});
  if (n == 0) return tree;
  auto map = [n](uint32_t p) { return n % 2 == 0 ? n - 1 - p : (p + 1) % n; };
  tree.root = map(first.root);
  for (uint32_t p = 0; p < n; ++p) {
    if (first.parent[p] != kNoMember) tree.parent[map(p)] = map(first.parent[p]);
    for (int side = 0; side < 2; ++side) {
      const uint32_t child = first.children[p][side];
      if (child != kNoMember) tree.children[map(p)][side] = map(child);
    }
  }
  return tree;
}

}  // namespace etwire::collectives

#include "collectives/tree_layout.h"

#include "collectives/hosts.h"

namespace etwire::collectives {

namespace {

Tree empty_tree(uint32_t n) {
  Tree tree;
  tree.parent.assign(n, kNoMember);
  tree.children.assign(n, {kNoMember, kNoMember, kNoMember});
  return tree;
}

// `over` (a binary tree over `ids.size()` nodes) with node i standing for member ids[i].
void add_binary_tree(const BinaryTree& over, const std::vector<uint32_t>& ids, Tree& tree) {
  for (uint32_t i = 0; i < ids.size(); ++i) {
    if (over.parent[i] != kNoMember) tree.parent[ids[i]] = ids[over.parent[i]];
    for (int side = 0; side < 2; ++side) {
      if (over.children[i][side] != kNoMember) {
        tree.children[ids[i]][side] = ids[over.children[i][side]];
      }
    }
  }
}

std::vector<Tree> flat_trees(uint32_t n) {
  std::vector<uint32_t> ids(n);
  for (uint32_t p = 0; p < n; ++p) ids[p] = p;
  const BinaryTree first = in_order_tree(n);
  std::vector<Tree> trees(2, empty_tree(n));
  add_binary_tree(first, ids, trees[0]);
  add_binary_tree(complementary_tree(first), ids, trees[1]);
  return trees;
}

std::vector<Tree> host_trees(const ResolvedSpec& spec) {
  const uint32_t n = spec.members();
  const GroupHosts hosts = group_hosts(spec.ranks, HostGrouping{spec.ranks_per_host});
  const BinaryTree first = in_order_tree(hosts.count());
  const BinaryTree second = complementary_tree(first);
  std::vector<Tree> trees(spec.channels(), empty_tree(n));
  std::vector<uint32_t> entries(hosts.count());
  for (uint32_t c = 0; c < trees.size(); ++c) {
    Tree& tree = trees[c];
    for (uint32_t h = 0; h < hosts.count(); ++h) {
      const std::vector<uint32_t>& members = hosts.members[h];
      const size_t start = c % members.size();
      entries[h] = members[start];
      for (size_t i = 1; i < members.size(); ++i) {  // the chain below the entry
        const uint32_t above = members[(start + i - 1) % members.size()];
        const uint32_t member = members[(start + i) % members.size()];
        tree.parent[member] = above;
        tree.children[above][2] = member;
      }
    }
    add_binary_tree(c % 2 == 0 ? first : second, entries, tree);
  }
  return trees;
}

}  // namespace

std::vector<Tree> all_reduce_trees(const ResolvedSpec& spec) {
  if (spec.algorithm == Algorithm::kTree) return host_trees(spec);
  return flat_trees(spec.members());
}

}  // namespace etwire::collectives

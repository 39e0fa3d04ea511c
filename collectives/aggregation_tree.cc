#include "collectives/aggregation_tree.h"

#include <fmt/format.h>

#include <algorithm>

namespace etwire::collectives {

std::string AggregationTree::check() const {
  const uint32_t n = nodes();
  if (n == 0) return "no aggregation node";
  uint32_t roots = 0;
  for (uint32_t k = 0; k < n; ++k) {
    if (parent[k] == kNoAggregator) {
      ++roots;
    } else if (parent[k] >= n) {
      return fmt::format("node {}: parent {} is not one of the {} nodes", k, parent[k], n);
    }
  }
  if (roots != 1) return fmt::format("{} roots; a tree has one", roots);
  // A chain longer than the node count loops.
  for (uint32_t k = 0; k < n; ++k) {
    uint32_t steps = 0;
    for (uint32_t at = k; parent[at] != kNoAggregator; at = parent[at]) {
      if (++steps > n) return fmt::format("node {}: its parents loop", k);
    }
  }
  for (size_t r = 0; r < leaf_of_rank.size(); ++r) {
    if (leaf_of_rank[r] >= n) {
      return fmt::format("rank {}: leaf {} is not one of the {} nodes", r, leaf_of_rank[r], n);
    }
  }
  return "";
}

AggregationTree single_switch_tree(uint32_t ranks) {
  return {{kNoAggregator}, std::vector<uint32_t>(ranks, 0)};
}

SliceReduction reduce_slice(const AggregationTree& tree, std::span<const int32_t> ranks,
                            std::span<const uint32_t> owners) {
  const uint32_t n = tree.nodes();
  SliceReduction out;
  out.member_children.resize(n);
  out.node_children.resize(n);
  if (owners.empty()) return out;
  const auto leaf = [&](uint32_t owner) {
    return tree.leaf_of_rank[static_cast<size_t>(ranks[owner])];
  };
  std::vector<uint32_t> below(n, 0);  // owners in each node's subtree
  for (uint32_t owner : owners) {
    for (uint32_t at = leaf(owner); at != kNoAggregator; at = tree.parent[at]) ++below[at];
  }
  out.root = leaf(owners.front());
  while (below[out.root] < owners.size()) out.root = tree.parent[out.root];
  std::vector<uint8_t> joined(n, 0);
  for (uint32_t owner : owners) {
    const uint32_t first = leaf(owner);
    out.member_children[first].push_back(owner);
    for (uint32_t at = first; at != out.root && !joined[at]; at = tree.parent[at]) {
      joined[at] = 1;
      out.node_children[tree.parent[at]].push_back(at);
    }
  }
  for (std::vector<uint32_t>& children : out.node_children) {
    std::sort(children.begin(), children.end());
  }
  return out;
}

}  // namespace etwire::collectives

// The fabric's aggregation nodes, as CollNet (NCCL's in-network reduction, SHARP on the switches)
// uses them: one per switch that reduces, joined in a tree along the switches' uplinks, and for
// every rank the node of the switch its NIC hangs off.
//
// A collective over a process group reduces each slice of its buffer through the part of the
// tree its slice owners need: the nodes at or below the lowest one whose subtree holds every
// owner (their lowest common ancestor), each node adding what its children sent before it
// passes the sum up, and the results coming back down the same way. In a program the nodes are
// participants after the members: node k at position members + k.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace etwire::collectives {

inline constexpr uint32_t kNoAggregator = UINT32_MAX;

struct AggregationTree {
  std::vector<uint32_t> parent;        // [node] -> parent node, kNoAggregator for a root
  std::vector<uint32_t> leaf_of_rank;  // [global rank] -> node of the switch its NIC hangs off

  uint32_t nodes() const { return static_cast<uint32_t>(parent.size()); }
  // "" when every parent is a node, no parent chain loops, and every leaf is a node; else what
  // is wrong.
  std::string check() const;
};

// One switch joining every rank below `ranks`: a single node.
AggregationTree single_switch_tree(uint32_t ranks);

// How one slice is reduced: which nodes take part, and what each receives from below.
struct SliceReduction {
  uint32_t root = kNoAggregator;  // the lowest node above every owner; kNoAggregator: no owner
  // [node] -> the member positions whose leaf it is, in the order the owners were given
  std::vector<std::vector<uint32_t>> member_children;
  // [node] -> the nodes below it that take part, ascending
  std::vector<std::vector<uint32_t>> node_children;
  bool takes_part(uint32_t node) const {
    return !member_children[node].empty() || !node_children[node].empty();
  }
};

// The reduction of a slice owned by `owners` (member positions; ranks[owner] their global rank).
// The tree must pass check() and hold a leaf for every owner's rank.
SliceReduction reduce_slice(const AggregationTree& tree, std::span<const int32_t> ranks,
                            std::span<const uint32_t> owners);

}  // namespace etwire::collectives

// The trees a tree all-reduce runs on, one per channel, over member positions: each member's
// parent and children.
//
// Double binary tree: two channels, the in-order tree of binary_tree.h over the members in group
// order and its complement.
//
// NCCL's tree: per channel c, a binary tree over the group's hosts (in ascending host order; the
// in-order tree for even c, its complement for odd c) with a chain inside every host. Host h is
// entered at its member c mod (its members) in local-index order; its other members follow in
// local-index order, rotated to start after the entry, each the child of the one before. The
// edges between hosts join entry members, which on fully populated hosts have the same local
// index: channel c's network traffic stays on one rail, and C channels over as many rails use
// every NIC. With one rank per host this is the double binary tree over hosts.
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "collectives/binary_tree.h"
#include "collectives/collective_spec.h"

namespace etwire::collectives {

// An entry member's children: up to two entries of other hosts and the next member of its chain.
inline constexpr uint32_t kMaxTreeChildren = 3;

struct Tree {
  std::vector<uint32_t> parent;                                  // kNoMember for the root
  std::vector<std::array<uint32_t, kMaxTreeChildren>> children;  // kNoMember where absent
};

// One tree per spec.channels(); spec.algorithm is kDoubleBinaryTree or kTree.
std::vector<Tree> all_reduce_trees(const ResolvedSpec& spec);

}  // namespace etwire::collectives

// The choices a configuration makes for how a collective is generated: the algorithm, and which
// buffer a trace's comm_size describes. Plain enums; the collectives library names, parses and
// applies them (collectives/algorithm.h, collectives/collective_spec.h).
#pragma once

#include <cstdint>

namespace etwire::config {

enum class Algorithm : uint8_t {
  kRing = 0,               // unidirectional ring; a pipelined chain for broadcast and reduce
  kBidirectionalRing = 1,  // half the data clockwise, half counter-clockwise
  kHalvingDoubling = 2,    // recursive halving / doubling (Rabenseifner for all-reduce)
  kDoubleBinaryTree = 3,   // two complementary binary trees, each carrying half
  kDirect = 4,             // every transfer straight from its source to its destination
  kPxn = 5,                // all-to-all relayed through the rail-aligned rank of the source host
  kDissemination = 6,      // barrier: ceil(log2 n) rounds of tiny messages
  kTree = 7,               // NCCL's tree: a double binary tree over hosts, a chain inside each
  kPat = 8,                // parallel aggregated trees: reversed-distance Bruck, log2 n steps
  kNvls = 9,       // NVLink SHARP: reduce in the server's switch, a ring between servers per slice
  kNvlsTree = 10,  // the same with a double binary tree between servers
  kHierarchical = 11,  // ring reduce-scatter in the host, all-reduce between, all-gather in
  kCollNet = 12,       // in-network reduction: the fabric's switches reduce between servers
};
inline constexpr int kAlgorithmCount = 13;

enum class SizeConvention : uint8_t {
  kInput,   // all-gather/gather: the shard each rank contributes; reduce-scatter/scatter: the
            // full n-block buffer
  kOutput,  // all-gather/gather: the full n-block result; reduce-scatter/scatter: one block
};

}  // namespace etwire::config

// The Chakra node and collective types as plain enums. They are config values (partial replay by
// node type, an algorithm per collective type) as well as trace values, so they live below both:
// the trace library names and parses them (trace/node.h), the config structs only hold them.
#pragma once

#include <cstdint>

namespace etwire::config {

enum class NodeType : uint8_t {
  kInvalid = 0,
  kMetadata = 1,
  kMemLoad = 2,
  kMemStore = 3,
  kComp = 4,
  kCommSend = 5,
  kCommRecv = 6,
  kCommColl = 7,
};
inline constexpr int kNodeTypeCount = 8;

enum class CollectiveType : uint8_t {
  kAllReduce = 0,
  kReduce = 1,
  kAllGather = 2,
  kGather = 3,
  kScatter = 4,
  kBroadcast = 5,
  kAllToAll = 6,
  kReduceScatter = 7,
  kReduceScatterBlock = 8,
  kBarrier = 9,
};
inline constexpr int kCollectiveTypeCount = 10;

}  // namespace etwire::config

#include "collectives/nccl_sizes.h"

#include <limits>

namespace etwire::collectives {

using trace::CollectiveType;

std::vector<uint64_t> stepped_sizes(uint64_t min_bytes, uint64_t max_bytes, uint64_t factor) {
  std::vector<uint64_t> sizes;
  if (min_bytes == 0 || min_bytes > max_bytes || factor < 2) return sizes;
  for (uint64_t size = min_bytes; size <= max_bytes; size *= factor) {
    sizes.push_back(size);
    if (size > std::numeric_limits<uint64_t>::max() / factor) break;
  }
  return sizes;
}

bool is_block_collective(CollectiveKind kind) {
  if (!kind) return false;
  switch (*kind) {
    case CollectiveType::kAllGather:
    case CollectiveType::kReduceScatter:
    case CollectiveType::kReduceScatterBlock:
    case CollectiveType::kAllToAll:
    case CollectiveType::kGather:
    case CollectiveType::kScatter:
      return true;
    case CollectiveType::kAllReduce:
    case CollectiveType::kBroadcast:
    case CollectiveType::kReduce:
    case CollectiveType::kBarrier:
      return false;
  }
  return false;
}

uint64_t nccl_rounded_bytes(CollectiveKind kind, uint64_t bytes, uint32_t ranks) {
  const uint64_t whole = bytes / kNcclElementBytes * kNcclElementBytes;
  if (!is_block_collective(kind) || ranks == 0) return whole;
  const uint64_t block = bytes / ranks / kNcclBlockAlignment * kNcclBlockAlignment;
  return block * ranks;
}

uint64_t nccl_count(CollectiveKind kind, uint64_t bytes, uint32_t ranks) {
  if (is_block_collective(kind) && ranks > 0) return bytes / ranks / kNcclElementBytes;
  return bytes / kNcclElementBytes;
}

std::string_view nccl_redop(CollectiveKind kind) {
  if (!kind) return "none";
  switch (*kind) {
    case CollectiveType::kAllReduce:
    case CollectiveType::kReduce:
    case CollectiveType::kReduceScatter:
    case CollectiveType::kReduceScatterBlock:
      return "sum";
    default:
      return "none";
  }
}

int nccl_root(CollectiveKind kind) {
  if (!kind) return -1;
  switch (*kind) {
    case CollectiveType::kBroadcast:
    case CollectiveType::kReduce:
    case CollectiveType::kGather:
    case CollectiveType::kScatter:
      return 0;
    default:
      return -1;
  }
}

uint64_t comm_size_for(CollectiveKind kind, uint64_t full_bytes, uint32_t ranks,
                       config::SizeConvention convention) {
  if (!kind || ranks == 0) return full_bytes;
  bool one_block = false;
  switch (*kind) {
    case CollectiveType::kAllGather:
    case CollectiveType::kGather:
      one_block = convention == config::SizeConvention::kInput;
      break;
    case CollectiveType::kReduceScatter:
    case CollectiveType::kReduceScatterBlock:
    case CollectiveType::kScatter:
      one_block = convention == config::SizeConvention::kOutput;
      break;
    default:
      break;
  }
  return one_block ? full_bytes / ranks : full_bytes;
}

}  // namespace etwire::collectives

#include "collectives/data_layout.h"

#include <algorithm>

namespace etwire::collectives {

DataLayout DataLayout::whole(uint32_t members, uint64_t bytes) {
  DataLayout layout;
  layout.shape_ = BufferShape::kWhole;
  layout.members_ = members;
  layout.full_bytes_ = bytes;
  layout.blocks_ = Partition(bytes, members);
  return layout;
}

DataLayout DataLayout::blocks(uint32_t members, uint64_t full_bytes) {
  DataLayout layout = whole(members, full_bytes);
  layout.shape_ = BufferShape::kBlocks;
  return layout;
}

DataLayout DataLayout::exchange(uint32_t members, uint64_t bytes,
                                std::vector<uint64_t> peer_bytes) {
  DataLayout layout = whole(members, bytes);
  layout.shape_ = BufferShape::kExchange;
  layout.peer_bytes_ = std::move(peer_bytes);
  if (!layout.peer_bytes_.empty()) {
    uint64_t largest = 0;
    for (uint32_t src = 0; src < members; ++src) {
      uint64_t row = 0;
      for (uint32_t dst = 0; dst < members; ++dst) row += layout.pair_bytes(src, dst);
      largest = std::max(largest, row);
    }
    layout.full_bytes_ = largest;
  }
  return layout;
}

void DataLayout::send_offsets(uint32_t src, std::vector<uint64_t>& out) const {
  out.resize(members_ + 1);
  out[0] = 0;
  for (uint32_t dst = 0; dst < members_; ++dst) out[dst + 1] = out[dst] + pair_bytes(src, dst);
}

void DataLayout::recv_offsets(uint32_t dst, std::vector<uint64_t>& out) const {
  out.resize(members_ + 1);
  out[0] = 0;
  for (uint32_t src = 0; src < members_; ++src) out[src + 1] = out[src] + pair_bytes(src, dst);
}

}  // namespace etwire::collectives

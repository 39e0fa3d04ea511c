// The decoded nodes a feeder holds, one per slot. Slots are numbered densely and live in fixed-size
// chunks, so adding slots never moves a node: the pointers handed out by Feeder::next() stay valid
// while the window grows. A slot's node is decoded over the previous occupant, so its strings and
// vectors keep their capacity and a warmed-up window decodes without allocating.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "trace/node.h"

namespace etwire::feeder {

class NodeSlots {
 public:
  uint32_t size() const { return size_; }
  // Nodes the chunks hold room for: the slots added, rounded up to a whole chunk.
  uint32_t capacity() const { return static_cast<uint32_t>(chunks_.size()) << kChunkBits; }

  trace::TraceNode& operator[](uint32_t slot) { return chunks_[slot >> kChunkBits][slot & kMask]; }
  const trace::TraceNode& operator[](uint32_t slot) const {
    return chunks_[slot >> kChunkBits][slot & kMask];
  }

  // Adds one slot and returns its number.
  uint32_t add() {
    if ((size_ & kMask) == 0 && (size_ >> kChunkBits) == chunks_.size()) {
      chunks_.push_back(std::make_unique<trace::TraceNode[]>(size_t{1} << kChunkBits));
    }
    return size_++;
  }

 private:
  // 16 nodes (about 9 KB) per chunk. Every rank of a run has a feeder, and most hold a few nodes
  // at a time (a collective per iteration): with chunks of 256 (140 KB) the feeders were most of
  // a 1024-rank run's memory. A window of 4096 nodes takes 256 chunks, allocated once.
  static constexpr uint32_t kChunkBits = 4;
  static constexpr uint32_t kMask = (1u << kChunkBits) - 1;

  std::vector<std::unique_ptr<trace::TraceNode[]>> chunks_;
  uint32_t size_ = 0;
};

}  // namespace etwire::feeder

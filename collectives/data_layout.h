// Where each member's data lives in its buffer: the byte count the algorithms move (the "full
// buffer" F), the per-member blocks, and for all-to-all the send and receive regions.
//
// Offsets in a step program are offsets in the member's own buffer. Block-structured collectives
// (reduce-scatter, all-gather, gather, scatter) keep all n blocks in one buffer of F bytes, block b
// belonging to member b, so results land in place as NCCL's in-place variants do. All-to-all keeps
// a send region followed by a receive region (and, for PXN, a relay staging region).
#pragma once

#include <cstdint>
#include <vector>

#include "collectives/partition.h"

namespace etwire::collectives {

enum class BufferShape : uint8_t {
  kWhole,     // all-reduce, reduce, broadcast, send/recv, barrier: one buffer of F bytes
  kBlocks,    // F cut into n blocks (Partition(F, n)); block b is member b's
  kExchange,  // all-to-all: pair_bytes(src, dst) from every member to every member
};

class DataLayout {
 public:
  DataLayout() = default;
  static DataLayout whole(uint32_t members, uint64_t bytes);
  static DataLayout blocks(uint32_t members, uint64_t full_bytes);
  // peer_bytes empty: every member sends Partition(bytes, n).size(dst) to dst; otherwise the
  // n x n matrix (row = sender position) of all-to-all-v.
  static DataLayout exchange(uint32_t members, uint64_t bytes, std::vector<uint64_t> peer_bytes);

  BufferShape shape() const { return shape_; }
  uint32_t members() const { return members_; }
  // F: the per-member buffer the algorithm moves (all-to-all: what each member sends, the
  // largest row for all-to-all-v). nccl-tests' algbw numerator.
  uint64_t full_bytes() const { return full_bytes_; }
  ByteRange block(uint32_t member) const { return blocks_.range(member); }
  const Partition& blocks() const { return blocks_; }

  uint64_t pair_bytes(uint32_t src, uint32_t dst) const {
    return peer_bytes_.empty() ? blocks_.size(dst)
                               : peer_bytes_[static_cast<uint64_t>(src) * members_ + dst];
  }
  // Prefix sums (n + 1 entries): where src's block for each dst starts in src's send region, and
  // where dst's block from each src starts in dst's receive region. `out` is reused.
  void send_offsets(uint32_t src, std::vector<uint64_t>& out) const;
  void recv_offsets(uint32_t dst, std::vector<uint64_t>& out) const;

 private:
  BufferShape shape_ = BufferShape::kWhole;
  uint32_t members_ = 1;
  uint64_t full_bytes_ = 0;
  Partition blocks_{0, 1};  // F into n blocks (the uniform all-to-all's per-peer sizes too)
  std::vector<uint64_t> peer_bytes_;
};

}  // namespace etwire::collectives

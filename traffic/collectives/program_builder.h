// Appends one member's operations to a CollectiveProgram. Algorithms speak in transfers (a byte
// range to or from a peer); the builder splits each over the QPs and turns "after these
// transfers" into per-piece dependencies on exactly the pieces whose bytes overlap.
#pragma once

#include <algorithm>
#include <cstdint>
#include <span>

#include "traffic/collectives/program.h"

namespace etwire::collectives {

// One transfer as emitted: `pieces` consecutive operations starting at `first_op` (an index in
// the member's program), covering `range` in pieces of `piece_bytes` (the last may be shorter).
// An empty range emits nothing and has no pieces.
struct Transfer {
  uint32_t first_op = 0;
  uint32_t pieces = 0;
  ByteRange range;
  uint64_t piece_bytes = 0;
};

// Labels of a transfer's operations.
struct OpTag {
  uint32_t chunk = 0;
  uint32_t step = 0;
  uint32_t channel = 0;
};

class ProgramBuilder {
 public:
  // Starts `program` afresh (keeping its capacity) for the group `ranks`.
  ProgramBuilder(CollectiveProgram& program, std::span<const int32_t> ranks, uint32_t qps,
                 uint64_t qp_alignment);

  void reserve(uint64_t ops, uint64_t deps);
  void begin_member(uint32_t position);
  void set_buffer_bytes(uint64_t bytes);
  // Each piece of the send depends on the pieces of `after` whose bytes it overlaps: a forwarded
  // or reduced piece waits only for the bytes it carries.
  Transfer send(uint32_t peer, ByteRange range, OpTag tag, std::span<const Transfer> after = {});
  Transfer recv(uint32_t peer, ByteRange range, OpTag tag, bool reduce,
                std::span<const Transfer> after = {});
  void end_member();

 private:
  Transfer emit(OpKind kind, uint32_t peer, ByteRange range, OpTag tag,
                std::span<const Transfer> after);

  CollectiveProgram& program_;
  uint32_t qps_;
  uint64_t qp_alignment_;
  uint64_t member_begin_ = 0;
};

// Inline: called once per transfer from every algorithm's innermost loop.
inline Transfer ProgramBuilder::send(uint32_t peer, ByteRange range, OpTag tag,
                                     std::span<const Transfer> after) {
  return emit(OpKind::kSend, peer, range, tag, after);
}

inline Transfer ProgramBuilder::recv(uint32_t peer, ByteRange range, OpTag tag, bool reduce,
                                     std::span<const Transfer> after) {
  return emit(reduce ? OpKind::kRecvReduce : OpKind::kRecv, peer, range, tag, after);
}

inline Transfer ProgramBuilder::emit(OpKind kind, uint32_t peer, ByteRange range, OpTag tag,
                                     std::span<const Transfer> after) {
  Transfer t;
  t.range = range;
  if (range.empty()) return t;
  // NCCL's split: an even share per QP rounded up to the alignment, so short transfers use fewer
  // QPs than configured.
  if (qps_ == 1) {
    t.piece_bytes = range.length;
    t.pieces = 1;
  } else {
    const uint64_t share = (range.length - 1) / qps_ + 1;
    t.piece_bytes = (share - 1) / qp_alignment_ * qp_alignment_ + qp_alignment_;
    t.pieces = static_cast<uint32_t>((range.length - 1) / t.piece_bytes + 1);
  }
  t.first_op = static_cast<uint32_t>(program_.kind_.size() - member_begin_);

  auto& p = program_;
  for (uint32_t i = 0; i < t.pieces; ++i) {
    const uint64_t begin = range.offset + i * t.piece_bytes;
    const uint64_t end = std::min(range.end(), begin + t.piece_bytes);
    p.kind_.push_back(kind);
    p.peer_.push_back(peer);
    p.offset_.push_back(begin);
    p.length_.push_back(end - begin);
    p.chunk_.push_back(tag.chunk);
    p.step_.push_back(tag.step);
    p.qp_.push_back(static_cast<uint16_t>(tag.channel * qps_ + i));
    for (const Transfer& dep : after) {
      if (dep.pieces == 0) continue;
      const uint64_t lo = std::max(begin, dep.range.offset);
      const uint64_t hi = std::min(end, dep.range.end());
      if (lo >= hi) continue;
      if (dep.pieces == 1) {
        p.deps_.push_back(dep.first_op);
        continue;
      }
      const uint64_t first = (lo - dep.range.offset) / dep.piece_bytes;
      const uint64_t last = (hi - 1 - dep.range.offset) / dep.piece_bytes;
      for (uint64_t d = first; d <= last; ++d) {
        p.deps_.push_back(static_cast<uint32_t>(dep.first_op + d));
      }
    }
    p.dep_begin_.push_back(p.deps_.size());
  }
  return t;
}

}  // namespace etwire::collectives

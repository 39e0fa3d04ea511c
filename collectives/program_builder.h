// Appends one member's operations to a CollectiveProgram. Algorithms speak in transfers (a byte
// range to or from a peer, for one chunk or a run of chunks); the builder splits each over the
// QPs and turns "after these transfers" into per-piece dependencies on exactly the pieces whose
// bytes overlap.
#pragma once

#include <algorithm>
#include <cstdint>
#include <span>

#include "collectives/program.h"

namespace etwire::collectives {

// One transfer as emitted: `pieces` consecutive operations starting at `first_op` (an index in
// the member's program), covering `run` (every chunk's range) in pieces of `piece_bytes` (the last
// may be shorter). An empty range emits nothing and has no pieces.
struct Transfer {
  uint32_t first_op = 0;
  uint32_t pieces = 0;
  ChunkRun run;
  uint64_t piece_bytes = 0;
};

// How a transfer of `length` bytes (> 0) is cut over `qps` QPs, as NCCL splits it: an even share
// per QP rounded up to `alignment`, so short transfers use fewer QPs than configured. Piece i
// (QP piece i) carries bytes [i x piece_bytes, min(length, (i + 1) x piece_bytes)).
struct QpSplit {
  uint64_t piece_bytes = 0;
  uint32_t pieces = 0;
};
inline QpSplit split_over_qps(uint64_t length, uint32_t qps, uint64_t alignment) {
  if (qps == 1) return {length, 1};
  const uint64_t share = (length - 1) / qps + 1;
  const uint64_t piece_bytes = (share - 1) / alignment * alignment + alignment;
  return {piece_bytes, static_cast<uint32_t>((length - 1) / piece_bytes + 1)};
}

// Labels of a one-chunk transfer's operations.
struct OpTag {
  uint32_t chunk = 0;
  uint32_t step = 0;
  uint32_t channel = 0;
};

// Labels of a chunk run's operations (the run names its chunks).
struct StepTag {
  uint32_t step = 0;
  uint32_t channel = 0;
};

class ProgramBuilder {
 public:
  // Starts `program` afresh (keeping its capacity) for the group `ranks` and `aggregators`
  // aggregation nodes after it.
  ProgramBuilder(CollectiveProgram& program, std::span<const int32_t> ranks, uint32_t qps,
                 uint64_t qp_alignment, uint32_t aggregators = 0);

  void reserve(uint64_t ops, uint64_t deps);
  // Operations of the member are numbered from `first_op` (Transfer::first_op, OpView::deps): a
  // part of a program emitted in parts numbers its operations after the parts before it.
  void begin_member(uint32_t position, uint64_t first_op = 0);
  // Operations emitted since begin_member.
  uint64_t member_ops() const { return program_.kind_.size() - member_begin_; }
  void set_buffer_bytes(uint64_t bytes);
  // One chunk. Each piece of the send depends on the pieces of `after` whose bytes it overlaps: a
  // forwarded or reduced piece waits only for the bytes it carries.
  Transfer send(uint32_t peer, ByteRange range, OpTag tag, std::span<const Transfer> after = {});
  Transfer recv(uint32_t peer, ByteRange range, OpTag tag, bool reduce,
                std::span<const Transfer> after = {});
  // A run of chunks: one operation per QP piece covers every chunk of the run. Dependencies are
  // chunk-wise (chunk k waits for chunk k of the pieces it overlaps), so each transfer in `after`
  // must either cover every chunk of `run`, with the same stride when the run has several chunks
  // (then the overlap is the same in every chunk), or none of them; anything else throws
  // std::logic_error, as it is a bug in the algorithm.
  Transfer send_run(uint32_t peer, const ChunkRun& run, StepTag tag,
                    std::span<const Transfer> after = {});
  Transfer recv_run(uint32_t peer, const ChunkRun& run, StepTag tag, bool reduce,
                    std::span<const Transfer> after = {});
  void end_member();

 private:
  Transfer emit(OpKind kind, uint32_t peer, const ChunkRun& run, StepTag tag,
                std::span<const Transfer> after);
  [[noreturn]] static void throw_not_chunk_wise(const ChunkRun& dependency, const ChunkRun& run);

  CollectiveProgram& program_;
  uint32_t qps_;
  uint64_t qp_alignment_;
  uint64_t member_begin_ = 0;
  uint64_t first_op_ = 0;
  uint64_t chunk_ops_ = 0;  // chunk operations emitted so far, over every member
};

// Inline: called once per transfer from every algorithm's innermost loop.
inline Transfer ProgramBuilder::send(uint32_t peer, ByteRange range, OpTag tag,
                                     std::span<const Transfer> after) {
  return emit(OpKind::kSend, peer, ChunkRun::single(tag.chunk, range), {tag.step, tag.channel},
              after);
}

inline Transfer ProgramBuilder::recv(uint32_t peer, ByteRange range, OpTag tag, bool reduce,
                                     std::span<const Transfer> after) {
  return emit(reduce ? OpKind::kRecvReduce : OpKind::kRecv, peer,
              ChunkRun::single(tag.chunk, range), {tag.step, tag.channel}, after);
}

inline Transfer ProgramBuilder::send_run(uint32_t peer, const ChunkRun& run, StepTag tag,
                                         std::span<const Transfer> after) {
  return emit(OpKind::kSend, peer, run, tag, after);
}

inline Transfer ProgramBuilder::recv_run(uint32_t peer, const ChunkRun& run, StepTag tag,
                                         bool reduce, std::span<const Transfer> after) {
  return emit(reduce ? OpKind::kRecvReduce : OpKind::kRecv, peer, run, tag, after);
}

inline Transfer ProgramBuilder::emit(OpKind kind, uint32_t peer, const ChunkRun& run, StepTag tag,
                                     std::span<const Transfer> after) {
  Transfer t;
  t.run = run;
  const ByteRange range = run.first;  // every chunk's range is this one moved by the stride
  if (range.empty()) return t;
  // Every chunk of a run is equally long, so the split is the same in each.
  const QpSplit split = split_over_qps(range.length, qps_, qp_alignment_);
  t.piece_bytes = split.piece_bytes;
  t.pieces = split.pieces;
  t.first_op = static_cast<uint32_t>(program_.kind_.size() - member_begin_ + first_op_);

  auto& p = program_;
  for (uint32_t i = 0; i < t.pieces; ++i) {
    // Bytes of this piece in the run's first chunk; dependencies are worked out there, as the
    // overlap is the same in every chunk.
    const uint64_t begin = range.offset + i * t.piece_bytes;
    const uint64_t end = std::min(range.end(), begin + t.piece_bytes);
    p.kind_.push_back(kind);
    p.peer_.push_back(peer);
    p.offset_.push_back(begin);
    p.length_.push_back(end - begin);
    p.stride_.push_back(run.stride);
    p.chunk_begin_.push_back(run.chunk_begin);
    p.chunk_count_.push_back(run.chunk_count);
    p.step_.push_back(tag.step);
    p.qp_.push_back(static_cast<uint16_t>(tag.channel * qps_ + i));
    for (const Transfer& dep : after) {
      if (dep.pieces == 0) continue;
      if (dep.run.chunk_begin >= run.chunk_end() || dep.run.chunk_end() <= run.chunk_begin) {
        continue;  // no chunk in common
      }
      if (dep.run.chunk_begin > run.chunk_begin || dep.run.chunk_end() < run.chunk_end() ||
          (run.chunk_count > 1 && dep.run.stride != run.stride)) {
        throw_not_chunk_wise(dep.run, run);
      }
      const ByteRange theirs = dep.run.range(run.chunk_begin);
      const uint64_t lo = std::max(begin, theirs.offset);
      const uint64_t hi = std::min(end, theirs.end());
      if (lo >= hi) continue;
      if (dep.pieces == 1) {
        p.deps_.push_back(dep.first_op);
        continue;
      }
      const uint64_t first = (lo - theirs.offset) / dep.piece_bytes;
      const uint64_t last = (hi - 1 - theirs.offset) / dep.piece_bytes;
      for (uint64_t d = first; d <= last; ++d) {
        p.deps_.push_back(static_cast<uint32_t>(dep.first_op + d));
      }
    }
    p.dep_begin_.push_back(p.deps_.size());
  }
  chunk_ops_ += uint64_t{t.pieces} * run.chunk_count;
  return t;
}

}  // namespace etwire::collectives

// The step programs of one collective: for each member, the ordered sends and receives it posts.
//
// Stored as flat arrays, one entry per operation (struct of arrays) and one index range per
// member, so that a million-flow all-to-all is a handful of allocations, memory is linear in the
// number of operations, and a transport can walk a member's operations without chasing pointers.
//
// An operation is one QP's share of a transfer for a run of pipelined chunks (chunk_run.h): the
// chunks chunk_begin .. chunk_begin + chunk_count - 1, chunk k moving the bytes
// first.offset + (k - chunk_begin) x stride, first.length long. Algorithms that treat every chunk
// alike (the ring family, chains, the double binary tree, direct) emit one operation per step and
// QP piece for all chunks; the others emit one per chunk. A per-chunk consumer expands each
// operation into its chunks (`op(program, index, chunk)`, `for_each_chunk_op`).
//
// Execution rules (docs/collectives.md), per chunk of an operation ("chunk operation"):
//  - dependencies are chunk-wise: chunk k of an operation may start once chunk k of every
//    operation in its `deps` has completed. Every dependency covers every chunk of the operation
//    that depends on it (the builder guarantees it), so no chunk waits on a chunk that does not
//    exist;
//  - an operation posts its chunks in ascending order; chunk operations between the same pair on
//    the same QP are matched in that posting order: the k-th send chunk from A to B on QP q fills
//    the k-th receive chunk from A posted by B on QP q (RC QP semantics);
//  - a receive either copies into its byte range or adds (reduces) into it.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "collectives/chunk_run.h"
#include "collectives/huge_page_allocator.h"
#include "collectives/partition.h"

namespace etwire::collectives {

enum class OpKind : uint8_t {
  kSend = 0,
  kRecv = 1,        // copy the received bytes into the range
  kRecvReduce = 2,  // add the received bytes into the range (sum)
};
std::string_view op_kind_name(OpKind kind);  // "send", "recv", "recv-reduce"

// One chunk of an operation: what a consumer that works chunk by chunk sees.
struct ChunkOpView {
  OpKind kind;
  uint32_t peer;    // position of the other end (the member itself for a local copy)
  ByteRange range;  // this chunk's bytes, in this member's buffer
  uint32_t chunk;
  uint32_t step;  // algorithm round, for reading programs (ring step, tree phase, ...)
  uint16_t qp;    // channel * qps + piece
  // Indexes of earlier operations of the same member; this chunk waits for the same chunk of
  // each.
  std::span<const uint32_t> deps;
  bool is_send() const { return kind == OpKind::kSend; }
};

// One operation as stored: a run of chunks.
struct OpView {
  OpKind kind;
  uint32_t peer;
  ChunkRun chunks;
  uint32_t step;
  uint16_t qp;
  std::span<const uint32_t> deps;  // chunk-wise, see above
  bool is_send() const { return kind == OpKind::kSend; }
  // Total bytes over every chunk of the run.
  uint64_t bytes() const { return chunks.first.length * chunks.chunk_count; }
  // Chunk `chunk` of the run (chunks.covers(chunk) must hold).
  ChunkOpView chunk(uint32_t chunk) const {
    return {kind, peer, chunks.range(chunk), chunk, step, qp, deps};
  }
};

class CollectiveProgram {
 public:
  // Member programs held: every member after generate(), or the ones asked for.
  size_t programs() const { return position_.size(); }
  uint32_t position(size_t program) const { return position_[program]; }
  // The whole process group, by position.
  const std::vector<int32_t>& ranks() const { return ranks_; }
  uint32_t members() const { return static_cast<uint32_t>(ranks_.size()); }
  // Participants that are no member: CollNet's aggregation nodes (aggregation_tree.h), at
  // positions members() .. participants() - 1. Their peers are members or other such nodes.
  uint32_t aggregators() const { return aggregators_; }
  uint32_t participants() const { return members() + aggregators_; }
  bool is_member(uint32_t position) const { return position < members(); }
  uint32_t qps() const { return qps_; }

  // Operations as stored (each a run of chunks).
  uint64_t ops() const { return kind_.size(); }
  uint32_t ops(size_t program) const {
    return static_cast<uint32_t>(program_begin_[program + 1] - program_begin_[program]);
  }
  // Chunk operations: the operations expanded into their chunks (the per-chunk flows a transport
  // moves). Kept as a running count, so O(1).
  uint64_t chunk_ops() const { return program_chunk_ops_.back(); }
  uint64_t chunk_ops(size_t program) const {
    return program_chunk_ops_[program + 1] - program_chunk_ops_[program];
  }
  uint64_t dependencies() const { return deps_.size(); }
  // Bytes the member's buffer must hold for every offset its program uses.
  uint64_t buffer_bytes(size_t program) const { return buffer_bytes_[program]; }
  OpView op(size_t program, uint32_t index) const;
  ChunkOpView op(size_t program, uint32_t index, uint32_t chunk) const {
    return op(program, index).chunk(chunk);
  }

  // Releases nothing: keeps capacity for the next generation into this object.
  void clear();
  // Bytes held by the arrays (capacity), for the benchmarks' memory accounting.
  uint64_t memory_bytes() const;

 private:
  friend class ProgramBuilder;

  template <typename T>
  using Array = std::vector<T, HugePageAllocator<T>>;

  std::vector<int32_t> ranks_;
  uint32_t aggregators_ = 0;
  uint32_t qps_ = 1;
  std::vector<uint32_t> position_;
  std::vector<uint64_t> program_begin_{0};      // programs() + 1 entries into the op arrays
  std::vector<uint64_t> program_chunk_ops_{0};  // programs() + 1 running chunk-operation counts
  std::vector<uint64_t> buffer_bytes_;
  Array<OpKind> kind_;
  Array<uint32_t> peer_;
  Array<uint64_t> offset_;  // of the first chunk
  Array<uint64_t> length_;  // of every chunk
  Array<uint64_t> stride_;
  Array<uint32_t> chunk_begin_;
  Array<uint32_t> chunk_count_;
  Array<uint32_t> step_;
  Array<uint16_t> qp_;
  Array<uint64_t> dep_begin_ = Array<uint64_t>(1, 0);  // ops() + 1 entries into deps_
  Array<uint32_t> deps_;
};

// Calls fn(index, chunk_op) for every chunk of every operation of member program `program`:
// operations in program order, each one's chunks ascending, which is the order chunks are posted
// on their QPs. `index` is the operation's index, which chunk_op.deps refer to.
template <typename Fn>
void for_each_chunk_op(const CollectiveProgram& program, size_t member_program, Fn&& fn) {
  const uint32_t ops = program.ops(member_program);
  for (uint32_t i = 0; i < ops; ++i) {
    const OpView op = program.op(member_program, i);
    for (uint32_t k = op.chunks.chunk_begin; k < op.chunks.chunk_end(); ++k) fn(i, op.chunk(k));
  }
}

}  // namespace etwire::collectives

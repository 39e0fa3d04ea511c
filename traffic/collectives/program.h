// The step programs of one collective: for each member, the ordered sends and receives it posts.
//
// Stored as flat arrays, one entry per operation (struct of arrays) and one index range per
// member, so that a million-flow all-to-all is a handful of allocations, memory is linear in the
// number of operations, and a transport can walk a member's operations without chasing pointers.
//
// Execution rules (docs/collectives.md):
//  - an operation may start once every operation in its `deps` has completed;
//  - operations between the same pair on the same QP are matched in program order: the k-th send
//    from A to B on QP q fills the k-th receive from A posted by B on QP q (RC QP semantics);
//  - a receive either copies into its byte range or adds (reduces) into it.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "traffic/collectives/huge_page_allocator.h"
#include "traffic/collectives/partition.h"

namespace etwire::collectives {

enum class OpKind : uint8_t {
  kSend = 0,
  kRecv = 1,        // copy the received bytes into the range
  kRecvReduce = 2,  // add the received bytes into the range (sum)
};
std::string_view op_kind_name(OpKind kind);  // "send", "recv", "recv-reduce"

struct OpView {
  OpKind kind;
  uint32_t peer;    // member position of the other end (the member itself for a local copy)
  ByteRange range;  // in this member's buffer
  uint32_t chunk;
  uint32_t step;  // algorithm round, for reading programs (ring step, tree phase, ...)
  uint16_t qp;    // channel * qps + piece
  std::span<const uint32_t> deps;  // indexes of earlier operations of the same member
  bool is_send() const { return kind == OpKind::kSend; }
};

class CollectiveProgram {
 public:
  // Member programs held: every member after generate(), or the ones asked for.
  size_t programs() const { return position_.size(); }
  uint32_t position(size_t program) const { return position_[program]; }
  // The whole process group, by position.
  const std::vector<int32_t>& ranks() const { return ranks_; }
  uint32_t members() const { return static_cast<uint32_t>(ranks_.size()); }
  uint32_t qps() const { return qps_; }

  uint64_t ops() const { return kind_.size(); }
  uint32_t ops(size_t program) const {
    return static_cast<uint32_t>(program_begin_[program + 1] - program_begin_[program]);
  }
  uint64_t dependencies() const { return deps_.size(); }
  // Bytes the member's buffer must hold for every offset its program uses.
  uint64_t buffer_bytes(size_t program) const { return buffer_bytes_[program]; }
  OpView op(size_t program, uint32_t index) const;

  // Releases nothing: keeps capacity for the next generation into this object.
  void clear();
  // Bytes held by the arrays (capacity), for the benchmarks' memory accounting.
  uint64_t memory_bytes() const;

 private:
  friend class ProgramBuilder;

  template <typename T>
  using Array = std::vector<T, HugePageAllocator<T>>;

  std::vector<int32_t> ranks_;
  uint32_t qps_ = 1;
  std::vector<uint32_t> position_;
  std::vector<uint64_t> program_begin_{0};  // programs() + 1 entries into the op arrays
  std::vector<uint64_t> buffer_bytes_;
  Array<OpKind> kind_;
  Array<uint32_t> peer_;
  Array<uint64_t> offset_;
  Array<uint64_t> length_;
  Array<uint32_t> chunk_;
  Array<uint32_t> step_;
  Array<uint16_t> qp_;
  Array<uint64_t> dep_begin_ = Array<uint64_t>(1, 0);  // ops() + 1 entries into deps_
  Array<uint32_t> deps_;
};

}  // namespace etwire::collectives

#include "collectives/program.h"

namespace etwire::collectives {

std::string_view op_kind_name(OpKind kind) {
  switch (kind) {
    case OpKind::kSend:
      return "send";
    case OpKind::kRecv:
      return "recv";
    case OpKind::kRecvReduce:
      return "recv-reduce";
  }
  return "?";
}

OpView CollectiveProgram::op(size_t program, uint32_t index) const {
  const uint64_t i = program_begin_[program] + index;
  const std::span<const uint32_t> deps(deps_.data() + dep_begin_[i],
                                       static_cast<size_t>(dep_begin_[i + 1] - dep_begin_[i]));
  const ChunkRun chunks{chunk_begin_[i], chunk_count_[i], {offset_[i], length_[i]}, stride_[i]};
  return OpView{kind_[i], peer_[i], chunks, step_[i], qp_[i], deps};
}

void CollectiveProgram::clear() {
  position_.clear();
  program_begin_.assign(1, 0);
  program_chunk_ops_.assign(1, 0);
  buffer_bytes_.clear();
  kind_.clear();
  peer_.clear();
  offset_.clear();
  length_.clear();
  stride_.clear();
  chunk_begin_.clear();
  chunk_count_.clear();
  step_.clear();
  qp_.clear();
  dep_begin_.assign(1, 0);
  deps_.clear();
}

uint64_t CollectiveProgram::memory_bytes() const {
  auto bytes = [](const auto& v) { return v.capacity() * sizeof(v[0]); };
  return bytes(ranks_) + bytes(position_) + bytes(program_begin_) + bytes(program_chunk_ops_) +
         bytes(buffer_bytes_) + bytes(kind_) + bytes(peer_) + bytes(offset_) + bytes(length_) +
         bytes(stride_) + bytes(chunk_begin_) + bytes(chunk_count_) + bytes(step_) + bytes(qp_) +
         bytes(dep_begin_) + bytes(deps_);
}

}  // namespace etwire::collectives

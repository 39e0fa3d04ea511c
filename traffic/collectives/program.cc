#include "traffic/collectives/program.h"

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
  const uint32_t* deps = deps_.data() + dep_begin_[i];
  return OpView{kind_[i],
                peer_[i],
                {offset_[i], length_[i]},
                chunk_[i],
                step_[i],
                qp_[i],
                {deps, static_cast<size_t>(dep_begin_[i + 1] - dep_begin_[i])}};
}

void CollectiveProgram::clear() {
  position_.clear();
  program_begin_.assign(1, 0);
  buffer_bytes_.clear();
  kind_.clear();
  peer_.clear();
  offset_.clear();
  length_.clear();
  chunk_.clear();
  step_.clear();
  qp_.clear();
  dep_begin_.assign(1, 0);
  deps_.clear();
}

uint64_t CollectiveProgram::memory_bytes() const {
  auto bytes = [](const auto& v) { return v.capacity() * sizeof(v[0]); };
  return bytes(ranks_) + bytes(position_) + bytes(program_begin_) + bytes(buffer_bytes_) +
         bytes(kind_) + bytes(peer_) + bytes(offset_) + bytes(length_) + bytes(chunk_) +
         bytes(step_) + bytes(qp_) + bytes(dep_begin_) + bytes(deps_);
}

}  // namespace etwire::collectives

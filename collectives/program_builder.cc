#include "collectives/program_builder.h"

#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>

namespace etwire::collectives {

ProgramBuilder::ProgramBuilder(CollectiveProgram& program, std::span<const int32_t> ranks,
                               uint32_t qps, uint64_t qp_alignment, uint32_t aggregators)
    : program_(program), qps_(qps), qp_alignment_(qp_alignment) {
  program_.clear();
  program_.ranks_.assign(ranks.begin(), ranks.end());
  program_.aggregators_ = aggregators;
  program_.qps_ = qps;
}

void ProgramBuilder::reserve(uint64_t ops, uint64_t deps) {
  program_.kind_.reserve(ops);
  program_.peer_.reserve(ops);
  program_.offset_.reserve(ops);
  program_.length_.reserve(ops);
  program_.stride_.reserve(ops);
  program_.chunk_begin_.reserve(ops);
  program_.chunk_count_.reserve(ops);
  program_.step_.reserve(ops);
  program_.qp_.reserve(ops);
  program_.dep_begin_.reserve(ops + 1);
  program_.deps_.reserve(deps);
}

void ProgramBuilder::begin_member(uint32_t position, uint64_t first_op) {
  program_.position_.push_back(position);
  program_.buffer_bytes_.push_back(0);
  member_begin_ = program_.kind_.size();
  first_op_ = first_op;
}

void ProgramBuilder::set_buffer_bytes(uint64_t bytes) {
  program_.buffer_bytes_.back() = bytes;
}

void ProgramBuilder::end_member() {
  program_.program_begin_.push_back(program_.kind_.size());
  program_.program_chunk_ops_.push_back(chunk_ops_);
}

void ProgramBuilder::throw_not_chunk_wise(const ChunkRun& dependency, const ChunkRun& run) {
  throw std::logic_error(
      fmt::format("chunks {}..{} (stride {}) cannot depend chunk-wise on chunks {}..{} (stride {})",
                  run.chunk_begin, run.chunk_end() - 1, run.stride, dependency.chunk_begin,
                  dependency.chunk_end() - 1, dependency.stride));
}

}  // namespace etwire::collectives

#include "collectives/generate.h"

namespace etwire::collectives {

ProgramGenerator::ProgramGenerator(const CollectiveSpec& spec) : ProgramGenerator(resolve(spec)) {}

ProgramGenerator::ProgramGenerator(ResolvedSpec spec)
    : spec_(std::make_unique<ResolvedSpec>(std::move(spec))), emitter_(make_emitter(*spec_)) {}

CollectiveProgram ProgramGenerator::generate() const {
  CollectiveProgram program;
  generate(program);
  return program;
}

void ProgramGenerator::generate(CollectiveProgram& into) const {
  ProgramBuilder builder(into, spec_->ranks, spec_->qps, spec_->qp_alignment, spec_->aggregators());
  const uint32_t n = spec_->participants();
  for (uint32_t p = 0; p < n; ++p) {
    builder.begin_member(p);
    emitter_->emit(p, builder);
    builder.end_member();
    if (p == 0 && n > 1) {
      // Size the arrays once from the first member so that large programs do not grow (and copy)
      // repeatedly. Rooted collectives are lopsided: for them, growth is cheaper than guessing.
      const bool rooted = spec_->is(trace::CollectiveType::kBroadcast) ||
                          spec_->is(trace::CollectiveType::kReduce) ||
                          spec_->is(trace::CollectiveType::kGather) ||
                          spec_->is(trace::CollectiveType::kScatter);
      if (!rooted) builder.reserve(into.ops() * n + n, into.dependencies() * n + n);
    }
  }
}

void ProgramGenerator::generate_member(uint32_t position, CollectiveProgram& into) const {
  ProgramBuilder builder(into, spec_->ranks, spec_->qps, spec_->qp_alignment, spec_->aggregators());
  builder.begin_member(position);
  emitter_->emit(position, builder);
  builder.end_member();
}

EmitCursor ProgramGenerator::begin_parts(uint32_t position) const {
  EmitCursor cursor;
  cursor.position = position;
  return cursor;
}

bool ProgramGenerator::next_part(EmitCursor& cursor, CollectiveProgram& into,
                                 uint64_t target_ops) const {
  if (cursor.done) return false;
  // No group: copying it into every part of every member would cost more than the part.
  ProgramBuilder builder(into, {}, spec_->qps, spec_->qp_alignment, spec_->aggregators());
  builder.begin_member(cursor.position, cursor.ops);
  emitter_->emit_part(cursor, target_ops, builder);
  cursor.ops += builder.member_ops();
  builder.end_member();
  return true;
}

void ProgramGenerator::member_flows(uint32_t position, CollectiveProgram& scratch,
                                    std::vector<Flow>& out) const {
  if (emitter_->summarize(position, out)) return;
  generate_member(position, scratch);
  out = flows(scratch);
}

CollectiveProgram generate(const CollectiveSpec& spec) {
  return ProgramGenerator(spec).generate();
}

}  // namespace etwire::collectives

// One algorithm's generator: appends the program of one member at a time. Members are generated
// independently of each other (no member's program is read to build another's), so a caller can
// materialise every member or only the ones it is about to run.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "collectives/collective_spec.h"
#include "collectives/program_builder.h"
#include "collectives/traffic_stats.h"

namespace etwire::collectives {

// Where a participant's program stands when it is emitted in parts (ProgramGenerator::next_part),
// so that a member of a very large collective holds a few steps of its program at a time, not all
// of them.
struct EmitCursor {
  uint32_t position = 0;
  bool done = false;            // the last part has been emitted
  uint64_t ops = 0;             // operations emitted so far: the next part's are numbered from here
  uint32_t next_step = 0;       // the emitter's: where the next part starts
  std::vector<Transfer> carry;  // the emitter's: transfers the next part depends on
};

class Emitter {
 public:
  virtual ~Emitter() = default;
  // Called between builder.begin_member(position) and builder.end_member().
  virtual void emit(uint32_t position, ProgramBuilder& builder) = 0;
  // Appends the next part of participant cursor.position's program, about `target_ops` operations
  // or more where the algorithm can stop there, and sets cursor.done with the last part; called
  // between builder.begin_member and builder.end_member. The default emits the whole program as
  // one part. An emitter that cuts its program promises that every operation of a later part
  // that is not a receive depends on an operation of its own part or of the part just before it:
  // then none could start before its part exists, even when a consumer emits the next part only
  // once an operation of the last one completes (engine::MemberExecution).
  virtual void emit_part(EmitCursor& cursor, uint64_t /*target_ops*/, ProgramBuilder& builder) {
    emit(cursor.position, builder);
    cursor.done = true;
  }
  // What participant `position` sends, into `out` as collectives::flows reports its program (per
  // destination and QP, sorted by them), worked out without building the program: a ring
  // member's 2(n-1) steps are what makes planning a large job quadratic. False when this emitter
  // has no such shortcut; the caller then generates the program.
  virtual bool summarize(uint32_t /*position*/, std::vector<Flow>& /*out*/) { return false; }
};

// The emitter for spec.algorithm; `spec` must outlive it.
std::unique_ptr<Emitter> make_emitter(const ResolvedSpec& spec);

// One per algorithm file.
std::unique_ptr<Emitter> make_ring_emitter(const ResolvedSpec& spec);
std::unique_ptr<Emitter> make_chain_emitter(const ResolvedSpec& spec);
std::unique_ptr<Emitter> make_halving_doubling_emitter(const ResolvedSpec& spec);
std::unique_ptr<Emitter> make_tree_all_reduce_emitter(const ResolvedSpec& spec);  // both trees
std::unique_ptr<Emitter> make_direct_emitter(const ResolvedSpec& spec);
std::unique_ptr<Emitter> make_pxn_emitter(const ResolvedSpec& spec);
std::unique_ptr<Emitter> make_dissemination_emitter(const ResolvedSpec& spec);
std::unique_ptr<Emitter> make_pat_emitter(const ResolvedSpec& spec);
// NVLS, NVLS-tree, CollNet and the hierarchical all-reduce.
std::unique_ptr<Emitter> make_hierarchical_emitter(const ResolvedSpec& spec);

}  // namespace etwire::collectives

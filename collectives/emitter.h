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

class Emitter {
 public:
  virtual ~Emitter() = default;
  // Called between builder.begin_member(position) and builder.end_member().
  virtual void emit(uint32_t position, ProgramBuilder& builder) = 0;
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

// Entry point: from a collective spec to the step programs of its members.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "collectives/collective_spec.h"
#include "collectives/emitter.h"
#include "collectives/program.h"
#include "collectives/traffic_stats.h"

namespace etwire::collectives {

class ProgramGenerator {
 public:
  // Throws SpecError.
  explicit ProgramGenerator(const CollectiveSpec& spec);
  explicit ProgramGenerator(ResolvedSpec spec);
  ProgramGenerator(const ProgramGenerator&) = delete;
  ProgramGenerator& operator=(const ProgramGenerator&) = delete;

  const ResolvedSpec& spec() const { return *spec_; }

  // Every participant's program: the members', then any aggregation nodes'.
  CollectiveProgram generate() const;
  // Every member's program into `into`, reusing its storage.
  void generate(CollectiveProgram& into) const;
  // Only participant `position`'s program (into.programs() == 1), reusing `into`'s storage. Members
  // do not depend on each other's programs, so a transport can materialise each member when it
  // starts instead of holding every member of a very large collective at once.
  void generate_member(uint32_t position, CollectiveProgram& into) const;
  // Participant `position`'s program in parts, for a consumer that holds only the part it is in
  // (engine::MemberExecution): each next_part() replaces `into` with the next part, about
  // `target_ops` operations (Emitter::emit_part), numbered after the parts before it (OpView::deps
  // use those numbers; operation i of the part is cursor.ops - into.ops() + i). A part holds
  // operations only: into.ranks() is empty. False, with nothing emitted, once cursor.done.
  EmitCursor begin_parts(uint32_t position) const;
  bool next_part(EmitCursor& cursor, CollectiveProgram& into, uint64_t target_ops) const;
  // collectives::flows of participant `position`'s program into `out`: from the emitter's
  // summary where it has one, else by generating the program into `scratch`.
  void member_flows(uint32_t position, CollectiveProgram& scratch, std::vector<Flow>& out) const;

 private:
  std::unique_ptr<ResolvedSpec> spec_;  // stable address: the emitter keeps a reference
  std::unique_ptr<Emitter> emitter_;
};

// ProgramGenerator(spec).generate(). Throws SpecError.
CollectiveProgram generate(const CollectiveSpec& spec);

}  // namespace etwire::collectives

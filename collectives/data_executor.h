// Runs a program over real buffers, without timing: the proof that a program does what its
// collective says. One cell per buffer byte holds a small integer (64-bit so that sums never
// wrap); a send copies its cells into a message, a receive copies or adds them.
//
// It runs chunk operations: every chunk of every operation is scheduled on its own, chunk k
// waiting for chunk k of the operation's dependencies (program.h), so a chunk run is proved
// chunk by chunk exactly as a transport would move it.
//
// The executor is deliberately adversarial: any chunk operation whose dependencies are complete
// (and which is next on its QP) may run, in an order the policy picks, and a send reads its bytes
// the moment it runs. A program that forgets a dependency therefore forwards stale data under some
// schedule; running several policies and seeds exposes it. It reports, instead of hanging:
// deadlocks, a receive that no send will ever match, a send nobody receives, and matched
// operations that disagree on length or chunk.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "collectives/program.h"

namespace etwire::collectives {

enum class SchedulePolicy : uint8_t {
  kFifo,    // runnable operations in the order they became runnable
  kLifo,    // the most recently enabled first (runs deep chains before wide ones)
  kRandom,  // uniformly among the runnable ones, from `seed`
};

struct ExecutionOptions {
  SchedulePolicy policy = SchedulePolicy::kFifo;
  uint64_t seed = 1;
  // Also record, per member, which members it has heard from through the messages its
  // operations depend on (the barrier's correctness criterion).
  bool track_causality = false;
};

using Cells = std::vector<uint64_t>;

struct ExecutionResult {
  std::string error;           // empty when the program ran to completion
  std::vector<Cells> buffers;  // final contents, by participant position
  // track_causality: heard_from[p][q] when member p's completion causally follows member q's
  // start.
  std::vector<std::vector<bool>> heard_from;
  bool ok() const { return error.empty(); }
};

// `program` must hold every participant (members, then any aggregation nodes); buffers[p] must
// have program.buffer_bytes(p) cells.
ExecutionResult execute(const CollectiveProgram& program, std::vector<Cells> buffers,
                        const ExecutionOptions& options);

}  // namespace etwire::collectives

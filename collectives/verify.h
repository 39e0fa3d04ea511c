// The collectives' definitions, checked: fills every member's input with small integers, runs the
// program with the data executor, and compares every member's result with what the collective
// defines (sum as the reduction). Results outside a member's defined output (scratch, partial
// sums left behind by a chain) are not checked; bytes no input filled hold a poison value that
// no correct result can contain.
#pragma once

#include <cstdint>
#include <string>

#include "collectives/collective_spec.h"
#include "collectives/data_executor.h"
#include "collectives/program.h"

namespace etwire::collectives {

// The value member `rank` holds at byte `offset` of its input: small (1..997), and different
// between ranks and between neighbouring bytes.
uint64_t input_value(int32_t rank, uint64_t offset);

// Empty when every member ends with the collective's result; otherwise what went wrong first.
// `program` must hold every member of `spec`. options.track_causality is set for barriers.
std::string verify(const ResolvedSpec& spec, const CollectiveProgram& program,
                   ExecutionOptions options = {});

}  // namespace etwire::collectives

// The algorithms that emit chunk runs (ring, bidirectional ring, chain, double binary tree,
// direct), written the plain way: one operation per chunk and QP piece, every range worked out
// from scratch with Partition, chunk-major or step-major exactly as the algorithms are described
// in docs/collectives.md. Slow, but plainly what each algorithm says: the compact programs must
// expand to exactly these (compact_program_test.cc).
#pragma once

#include <optional>

#include "collectives/collective_spec.h"
#include "collectives/program.h"

namespace etwire::collectives::testing {

// Every member's program, one operation per chunk; nullopt for an algorithm not written here.
std::optional<CollectiveProgram> per_chunk_reference(const ResolvedSpec& spec);

}  // namespace etwire::collectives::testing

// Message sizes as nccl-tests steps and rounds them, so that a sweep's rows line up with an
// nccl-tests table of the same -b/-e/-f: sizes go from the minimum to the maximum, each the
// previous times the step factor; every size is a whole number of 4-byte elements (nccl-tests'
// default type, float), and the collectives that cut the buffer into one block per rank
// (all-gather, reduce-scatter, all-to-all, gather, scatter) round each rank's block down to a
// multiple of 16 bytes, as nccl-tests does. Sizes are the full buffer F (the algbw numerator, the
// nccl-tests "size" column); comm_size_for gives the comm_size a trace states for it.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "collectives/algorithm.h"
#include "config/collective_algorithm.h"

namespace etwire::collectives {

// nccl-tests' default element type: float.
inline constexpr uint64_t kNcclElementBytes = 4;
inline constexpr std::string_view kNcclElementType = "float";
// The alignment nccl-tests gives each rank's block in the block collectives.
inline constexpr uint64_t kNcclBlockAlignment = 16;

// min, min x factor, min x factor^2, ... up to and including max. Empty when min is 0, min > max
// or factor < 2 (the caller says why); stops before a product would overflow.
std::vector<uint64_t> stepped_sizes(uint64_t min_bytes, uint64_t max_bytes, uint64_t factor);

// `bytes` rounded down as nccl-tests rounds it for `kind` over `ranks` ranks: to whole elements,
// and for the block collectives to ranks blocks of a multiple of 16 bytes. 0 when nothing is
// left (a size below ranks x 16 bytes for a block collective).
uint64_t nccl_rounded_bytes(CollectiveKind kind, uint64_t bytes, uint32_t ranks);

// Whether `kind` cuts its buffer into one block per rank (the rounding above applies).
bool is_block_collective(CollectiveKind kind);

// The nccl-tests "count" column of a rounded size: elements per rank's block for the block
// collectives, elements of the whole buffer otherwise.
uint64_t nccl_count(CollectiveKind kind, uint64_t bytes, uint32_t ranks);
// "sum" for the reducing collectives, "none" for the others (nccl-tests' redop column).
std::string_view nccl_redop(CollectiveKind kind);
// The root rank of the rooted collectives (broadcast, reduce, gather, scatter: rank 0, as a
// generated microbenchmark has it), -1 for the others (nccl-tests' root column).
int nccl_root(CollectiveKind kind);

// The comm_size a trace states for a collective whose full buffer F is `full_bytes`, under
// `convention` (see docs/collectives.md, "Byte semantics"): F / ranks where comm_size counts one
// rank's block, F otherwise. `full_bytes` should be a rounded size (a multiple of ranks for the
// block collectives).
uint64_t comm_size_for(CollectiveKind kind, uint64_t full_bytes, uint32_t ranks,
                       config::SizeConvention convention);

}  // namespace etwire::collectives

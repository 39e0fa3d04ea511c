// The algorithms a collective can be generated with, their names on the command line, and which
// collective each applies to.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "config/collective_algorithm.h"
#include "trace/node.h"

namespace etwire::collectives {

using Algorithm = config::Algorithm;
inline constexpr int kAlgorithmCount = config::kAlgorithmCount;

// "ring", "bidir-ring", "halving-doubling", "double-binary-tree", "direct", "pxn",
// "dissemination", "tree", "pat", "nvls", "nvls-tree", "hierarchical", "collnet".
std::string_view algorithm_name(Algorithm algorithm);
// Accepts the names above in any case, with '_' for '-', and the aliases "bidirectional-ring",
// "hd", "rabenseifner", "dbt".
std::optional<Algorithm> parse_algorithm(std::string_view text);
// Every algorithm's name, comma-separated, for help texts and errors.
std::string algorithm_names();

// The collective of a spec: a Chakra collective, or nullopt for a point-to-point send/recv.
using CollectiveKind = std::optional<trace::CollectiveType>;

// "ALL_REDUCE", ..., "SEND_RECV".
std::string_view collective_kind_name(CollectiveKind kind);

// Algorithms that can generate `kind`, the default first.
std::vector<Algorithm> applicable_algorithms(CollectiveKind kind);
Algorithm default_algorithm(CollectiveKind kind);
bool is_applicable(Algorithm algorithm, CollectiveKind kind);

}  // namespace etwire::collectives

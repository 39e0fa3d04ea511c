#include "tests/collectives/test_groups.h"

#include <cctype>

namespace etwire::collectives::testing {

std::string Case::name() const {
  std::string out;
  for (char c : collective_kind_name(collective)) {
    if (c != '_') out += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  }
  if (variable_sizes) out += "v";
  out += "_";
  for (char c : algorithm_name(algorithm)) out += c == '-' ? '_' : c;
  return out;
}

std::vector<Case> all_cases() {
  std::vector<Case> cases;
  std::vector<CollectiveKind> kinds = {std::nullopt};
  for (int t = 0; t < trace::kCollectiveTypeCount; ++t) {
    kinds.push_back(static_cast<trace::CollectiveType>(t));
  }
  for (CollectiveKind kind : kinds) {
    for (Algorithm algorithm : applicable_algorithms(kind)) {
      cases.push_back({kind, algorithm, false});
      if (kind == trace::CollectiveType::kAllToAll) cases.push_back({kind, algorithm, true});
    }
  }
  return cases;
}

std::vector<uint64_t> uneven_matrix(uint32_t n, uint64_t bytes, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<uint64_t> sizes(static_cast<size_t>(n) * n);
  const uint64_t top = bytes / n * 2 + 2;
  for (auto& s : sizes) s = rng() % 5 == 0 ? 0 : rng() % top;
  return sizes;
}

}  // namespace etwire::collectives::testing

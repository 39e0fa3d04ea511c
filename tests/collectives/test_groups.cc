#include "tests/collectives/test_groups.h"

#include <cctype>

#include "collectives/generate.h"
#include "collectives/hosts.h"
#include "collectives/verify.h"

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

std::shared_ptr<const AggregationTree> switch_tree(std::span<const int32_t> ranks,
                                                   uint32_t ranks_per_host, uint64_t seed) {
  auto tree = std::make_shared<AggregationTree>();
  tree->parent = {4, 4, 5, 5, 6, 6, kNoAggregator};
  const int32_t top = ranks.empty() ? 0 : *std::max_element(ranks.begin(), ranks.end());
  const HostGrouping hosts{ranks_per_host};
  tree->leaf_of_rank.resize(static_cast<size_t>(top) + 1);
  for (int32_t r = 0; r <= top; ++r) {
    tree->leaf_of_rank[static_cast<size_t>(r)] =
        static_cast<uint32_t>(seed % 2 == 0 ? hosts.local_index(r) % 4 : hosts.host(r) % 4);
  }
  return tree;
}

void add_switch_tree(CollectiveSpec& spec, uint64_t seed) {
  if (spec.algorithm == Algorithm::kCollNet) {
    spec.aggregation = switch_tree(spec.ranks, spec.ranks_per_host, seed);
  }
}

std::string verify_varied(CollectiveSpec spec, uint64_t seed) {
  constexpr SchedulePolicy kPolicies[] = {SchedulePolicy::kFifo, SchedulePolicy::kLifo,
                                          SchedulePolicy::kRandom};
  spec.chunks = 1 + seed % 4;
  spec.qps = 1 + seed % 3;
  spec.qp_alignment = 1;
  if (seed % 3 == 0) spec.ranks = sparse_group(static_cast<uint32_t>(spec.ranks.size()), seed);
  add_switch_tree(spec, seed);
  const ProgramGenerator generator(spec);
  ExecutionOptions options;
  options.policy = kPolicies[seed % 3];
  options.seed = seed;
  const std::string error = verify(generator.spec(), generator.generate(), options);
  if (error.empty()) return error;
  return error + " (" + std::string(collective_kind_name(spec.collective)) + " " +
         std::string(algorithm_name(generator.spec().algorithm)) +
         " n=" + std::to_string(spec.ranks.size()) + " hosts of " +
         std::to_string(spec.ranks_per_host) +
         " channels=" + std::to_string(spec.channels.value_or(0)) +
         " bytes=" + std::to_string(spec.bytes) + " chunks=" + std::to_string(spec.chunks) +
         " qps=" + std::to_string(spec.qps) + " seed=" + std::to_string(seed) + ")";
}

std::vector<uint64_t> uneven_matrix(uint32_t n, uint64_t bytes, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<uint64_t> sizes(static_cast<size_t>(n) * n);
  const uint64_t top = bytes / n * 2 + 2;
  for (auto& s : sizes) s = rng() % 5 == 0 ? 0 : rng() % top;
  return sizes;
}

}  // namespace etwire::collectives::testing

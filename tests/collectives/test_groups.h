// Process groups and specs shared by the collectives tests.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <memory>
#include <numeric>
#include <random>
#include <span>
#include <string>
#include <vector>

#include "collectives/collective_spec.h"

namespace etwire::collectives::testing {

// Ranks 0..n-1 in order.
inline std::vector<int32_t> contiguous_group(uint32_t n) {
  std::vector<int32_t> ranks(n);
  std::iota(ranks.begin(), ranks.end(), 0);
  return ranks;
}

// n distinct global ranks drawn from [0, 4n + 8), in shuffled order: a group that is neither
// 0..n-1 nor sorted.
inline std::vector<int32_t> sparse_group(uint32_t n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<int32_t> pool(4 * n + 8);
  std::iota(pool.begin(), pool.end(), 0);
  std::shuffle(pool.begin(), pool.end(), rng);
  pool.resize(n);
  return pool;
}

struct Case {
  CollectiveKind collective;
  Algorithm algorithm;
  bool variable_sizes = false;  // all-to-all-v
  std::string name() const;
};

// The algorithms that lay themselves over hosts (CollectiveSpec::ranks_per_host): the tests give
// them hosts of several ranks.
inline bool lays_over_hosts(Algorithm algorithm) {
  return algorithm == Algorithm::kPxn || algorithm == Algorithm::kTree ||
         algorithm == Algorithm::kNvls || algorithm == Algorithm::kNvlsTree ||
         algorithm == Algorithm::kHierarchical || algorithm == Algorithm::kCollNet;
}

// A fabric of four leaf switches, two pairs of them under a middle switch each, and a top
// switch: aggregation nodes 0-3 (leaves), 4 (over 0 and 1), 5 (over 2 and 3) and 6 (the root).
// Even `seed`: rail-optimised, a rank's leaf is its local index mod 4 (so a slice's owners
// share a leaf); odd: a rank's leaf is its host mod 4 (so slices climb the tree).
std::shared_ptr<const AggregationTree> switch_tree(std::span<const int32_t> ranks,
                                                   uint32_t ranks_per_host, uint64_t seed);
// Gives a CollNet spec switch_tree(); leaves any other alone.
void add_switch_tree(CollectiveSpec& spec, uint64_t seed);

// Every collective x every algorithm that applies to it (all-to-all also as all-to-all-v).
std::vector<Case> all_cases();

// Runs `spec` on real buffers with its chunks (1-4), QPs per peer (1-3, alignment 1), group (every
// third seed a sparse one) and the executor's schedule varied by `seed`: "" when every member ends
// with the collective's result, else what went wrong and the spec that did it.
std::string verify_varied(CollectiveSpec spec, uint64_t seed);

// All-to-all-v sizes for n members, roughly `bytes` per member, with zeros sprinkled in.
std::vector<uint64_t> uneven_matrix(uint32_t n, uint64_t bytes, uint64_t seed);

// What a ring-family spec of for_each_ring_spec varies over; chunks and QPs per peer are drawn
// from 1 .. max_chunks_and_qps, and the size among uneven blocks, blocks shorter than the QP
// alignment and empty ones.
struct RingSpecRange {
  std::vector<uint32_t> members;
  std::vector<uint32_t> ranks_per_host;
  std::vector<uint32_t> channels;  // 0: unset; only the one-way ring takes channels
  uint32_t max_chunks_and_qps = 4;
};

// Calls fn(spec, label) for all-reduce, reduce-scatter and all-gather on the ring and the
// bidirectional ring over `range`, the draws made from `seed`; `label` names the spec for a
// failure message. Stops at the first fatal failure.
template <typename Fn>
void for_each_ring_spec(const RingSpecRange& range, uint64_t seed, Fn&& fn) {
  using trace::CollectiveType;
  for (CollectiveType type :
       {CollectiveType::kAllReduce, CollectiveType::kReduceScatter, CollectiveType::kAllGather}) {
    for (Algorithm algorithm : {Algorithm::kRing, Algorithm::kBidirectionalRing}) {
      for (uint32_t n : range.members) {
        for (uint32_t per_host : range.ranks_per_host) {
          for (uint32_t channels : range.channels) {
            if (channels > 0 && algorithm != Algorithm::kRing) continue;
            seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
            CollectiveSpec spec;
            spec.collective = type;
            spec.algorithm = algorithm;
            spec.ranks = contiguous_group(n);
            spec.ranks_per_host = per_host;
            if (channels > 0) spec.channels = channels;
            spec.chunks = 1 + static_cast<uint32_t>(seed >> 60) % range.max_chunks_and_qps;
            spec.qps = 1 + static_cast<uint32_t>(seed >> 50) % range.max_chunks_and_qps;
            const uint64_t sizes[] = {1000003, 4096 * n + 77, n / 2 + 1};
            spec.bytes = sizes[(seed >> 40) % 3];
            const std::string label =
                "type " + std::to_string(static_cast<int>(type)) + " algorithm " +
                std::to_string(static_cast<int>(algorithm)) + " n " + std::to_string(n) +
                " per host " + std::to_string(per_host) + " channels " + std::to_string(channels) +
                " chunks " + std::to_string(spec.chunks) + " qps " + std::to_string(spec.qps) +
                " bytes " + std::to_string(spec.bytes);
            fn(spec, label);
            if (::testing::Test::HasFatalFailure()) return;
          }
        }
      }
    }
  }
}

}  // namespace etwire::collectives::testing

// Every collective x every algorithm x group sizes 1..33, run over real buffers by the data
// executor: each member must end with exactly the collective's result. Sizes include 0, 1, sizes
// that do not divide by n and larger buffers; chunking, QPs per peer, QP alignment, the group's
// global ranks, the root and the executor's schedule vary from run to run so that together they
// cover the cross product without running all of it.
#include <gtest/gtest.h>

#include <array>

#include "collectives/generate.h"
#include "collectives/verify.h"
#include "tests/collectives/test_groups.h"

namespace etwire::collectives {
namespace {

using testing::Case;

struct Setting {
  uint32_t chunks;
  bool by_size;  // chunk by size (about a third of the buffer) instead of by count
  uint32_t qps;
  uint64_t qp_alignment;
};

constexpr std::array<Setting, 5> kSettings = {{
    {1, false, 1, 128},
    {3, false, 2, 1},
    {2, false, 3, 4},
    {0, true, 1, 1},
    {5, false, 4, 1},
}};
constexpr std::array<SchedulePolicy, 3> kPolicies = {SchedulePolicy::kFifo, SchedulePolicy::kLifo,
                                                     SchedulePolicy::kRandom};

std::array<uint64_t, 4> sizes_for(uint32_t n) {
  return {0, 1, 2 * n + 3, 97 * n + 13};
}

CollectiveSpec make_spec(const Case& c, uint32_t n, uint64_t bytes, const Setting& setting,
                         uint64_t seed) {
  CollectiveSpec spec;
  spec.collective = c.collective;
  spec.algorithm = c.algorithm;
  const uint32_t members = c.collective ? n : std::min<uint32_t>(n, 2);
  spec.ranks =
      seed % 3 == 0 ? testing::contiguous_group(members) : testing::sparse_group(members, seed);
  spec.bytes = bytes;
  spec.root = spec.ranks[(seed * 5 + 3) % members];
  if (c.variable_sizes) spec.peer_bytes = testing::uneven_matrix(members, bytes, seed);
  spec.chunks = setting.by_size ? 1 : setting.chunks;
  spec.qps = setting.qps;
  spec.qp_alignment = setting.qp_alignment;
  // Hosts of 2, 4 or 8 for the algorithms that lay themselves over hosts (with sparse groups,
  // hosts hold different numbers of members).
  const bool over_hosts = testing::lays_over_hosts(c.algorithm);
  spec.ranks_per_host = over_hosts ? 2u << (seed % 3) : 1;
  spec.size_convention = seed % 4 == 1 ? SizeConvention::kOutput : SizeConvention::kInput;
  testing::add_switch_tree(spec, seed);
  if (setting.by_size) spec.chunk_bytes = resolve(spec).layout.full_bytes() / 3 + 1;
  return spec;
}

std::string describe(const CollectiveSpec& spec, const ResolvedSpec& resolved) {
  std::string ranks;
  for (int32_t r : spec.ranks) ranks += std::to_string(r) + " ";
  return "n=" + std::to_string(spec.ranks.size()) + " bytes=" + std::to_string(spec.bytes) +
         " chunks=" + std::to_string(resolved.chunks) + " qps=" + std::to_string(spec.qps) +
         " align=" + std::to_string(spec.qp_alignment) +
         " hosts=" + std::to_string(spec.ranks_per_host) +
         " root=" + std::to_string(spec.root.value_or(-1)) + " ranks=[ " + ranks + "]";
}

void expect_correct(const CollectiveSpec& spec, SchedulePolicy policy, uint64_t seed) {
  ProgramGenerator generator(spec);
  const CollectiveProgram program = generator.generate();
  ExecutionOptions options;
  options.policy = policy;
  options.seed = seed;
  const std::string error = verify(generator.spec(), program, options);
  EXPECT_EQ(error, "") << describe(spec, generator.spec());
}

class Correctness : public ::testing::TestWithParam<Case> {};

TEST_P(Correctness, EveryGroupSizeEndsWithTheDefinedResult) {
  const Case& c = GetParam();
  for (uint32_t n = 1; n <= 33; ++n) {
    const auto sizes = sizes_for(n);
    for (size_t s = 0; s < sizes.size(); ++s) {
      const uint64_t seed = n * 31 + s;
      const Setting& setting = kSettings[(n + s) % kSettings.size()];
      expect_correct(make_spec(c, n, sizes[s], setting, seed),
                     kPolicies[(n * 7 + s) % kPolicies.size()], seed);
      if (HasFailure()) return;
    }
  }
}

TEST_P(Correctness, SmallGroupsUnderEverySettingAndSchedule) {
  const Case& c = GetParam();
  for (uint32_t n : {1u, 2u, 3u, 4u, 5u, 6u, 8u, 13u}) {
    const auto sizes = sizes_for(n);
    for (size_t s = 0; s < sizes.size(); ++s) {
      for (size_t k = 0; k < kSettings.size(); ++k) {
        for (SchedulePolicy policy : kPolicies) {
          const uint64_t seed = n * 1000 + s * 10 + k;
          expect_correct(make_spec(c, n, sizes[s], kSettings[k], seed), policy, seed);
          if (HasFailure()) return;
        }
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(AllCollectives, Correctness, ::testing::ValuesIn(testing::all_cases()),
                         [](const auto& info) { return info.param.name(); });

}  // namespace
}  // namespace etwire::collectives

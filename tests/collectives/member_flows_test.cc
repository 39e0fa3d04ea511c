// ProgramGenerator::member_flows: where the emitter sums a member's sends without building its
// program (Emitter::summarize, the ring family), the sums are exactly collectives::flows of the
// generated program: every destination, QP id, byte and chunk operation, at group sizes, hosts
// (the last one short), channels, chunking, QP splits and sizes that leave blocks uneven or empty.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "collectives/generate.h"
#include "collectives/traffic_stats.h"
#include "tests/collectives/test_groups.h"

namespace etwire::collectives {
namespace {

using trace::CollectiveType;

std::string differences(const std::vector<Flow>& summed, const std::vector<Flow>& generated) {
  if (summed.size() != generated.size()) {
    return "flows: " + std::to_string(summed.size()) + " summed, " +
           std::to_string(generated.size()) + " generated";
  }
  for (size_t i = 0; i < summed.size(); ++i) {
    const Flow& a = summed[i];
    const Flow& b = generated[i];
    if (a.src != b.src || a.dst != b.dst || a.qp != b.qp || a.bytes != b.bytes ||
        a.operations != b.operations) {
      return "flow " + std::to_string(i) + ": summed " + std::to_string(a.src) + "->" +
             std::to_string(a.dst) + " qp " + std::to_string(a.qp) + " " + std::to_string(a.bytes) +
             " B " + std::to_string(a.operations) + " ops, generated " + std::to_string(b.src) +
             "->" + std::to_string(b.dst) + " qp " + std::to_string(b.qp) + " " +
             std::to_string(b.bytes) + " B " + std::to_string(b.operations) + " ops";
    }
  }
  return "";
}

// member_flows against flows(generate_member) for every member of `spec`.
std::string compare(const CollectiveSpec& spec) {
  const ProgramGenerator generator(spec);
  CollectiveProgram scratch;
  CollectiveProgram program;
  std::vector<Flow> summed;
  for (uint32_t p = 0; p < generator.spec().participants(); ++p) {
    generator.member_flows(p, scratch, summed);
    generator.generate_member(p, program);
    const std::string diff = differences(summed, flows(program));
    if (!diff.empty()) return "member " + std::to_string(p) + ": " + diff;
  }
  return "";
}

TEST(MemberFlows, TheRingFamilysSumsAreTheGeneratedProgramsFlows) {
  uint64_t seed = 3;
  int specs = 0;
  for (CollectiveType type :
       {CollectiveType::kAllReduce, CollectiveType::kReduceScatter, CollectiveType::kAllGather}) {
    for (Algorithm algorithm : {Algorithm::kRing, Algorithm::kBidirectionalRing}) {
      for (uint32_t n : {2u, 3u, 7u, 16u, 24u}) {
        for (uint32_t per_host : {1u, 3u, 8u}) {
          for (uint32_t channels : {0u, 1u, 3u, 8u}) {
            if (channels > 0 && algorithm != Algorithm::kRing) continue;
            seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
            CollectiveSpec spec;
            spec.collective = type;
            spec.algorithm = algorithm;
            spec.ranks = testing::contiguous_group(n);
            spec.ranks_per_host = per_host;
            if (channels > 0) spec.channels = channels;
            spec.chunks = 1 + static_cast<uint32_t>(seed >> 60) % 4;
            spec.qps = 1 + static_cast<uint32_t>(seed >> 50) % 4;
            // Uneven blocks, blocks shorter than the QP alignment, and empty ones.
            const uint64_t sizes[] = {1000003, 4096 * n + 77, n / 2 + 1};
            spec.bytes = sizes[(seed >> 40) % 3];
            ASSERT_EQ(compare(spec), "")
                << "type " << static_cast<int>(type) << " algorithm " << static_cast<int>(algorithm)
                << " n " << n << " per host " << per_host << " channels " << channels << " chunks "
                << spec.chunks << " qps " << spec.qps << " bytes " << spec.bytes;
            ++specs;
          }
        }
      }
    }
  }
  EXPECT_GT(specs, 200);
}

// Emitters without a summary generate the program: member_flows still answers, the same way.
TEST(MemberFlows, OtherAlgorithmsGenerateTheProgram) {
  for (Algorithm algorithm : {Algorithm::kHalvingDoubling, Algorithm::kDoubleBinaryTree}) {
    CollectiveSpec spec;
    spec.collective = CollectiveType::kAllReduce;
    spec.algorithm = algorithm;
    spec.ranks = testing::contiguous_group(12);
    spec.bytes = 1 << 20;
    ASSERT_EQ(compare(spec), "") << static_cast<int>(algorithm);
  }
}

}  // namespace
}  // namespace etwire::collectives

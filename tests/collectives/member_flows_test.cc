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
  int specs = 0;
  testing::for_each_ring_spec({{2, 3, 7, 16, 24}, {1, 3, 8}, {0, 1, 3, 8}, 4}, 3,
                              [&](const CollectiveSpec& spec, const std::string& label) {
                                ASSERT_EQ(compare(spec), "") << label;
                                ++specs;
                              });
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

// ProgramGenerator::next_part: a program emitted in parts is the whole program, operation for
// operation (kind, peer, bytes, chunks, step, QP and dependencies, numbered over the whole
// program), and each later part keeps Emitter::emit_part's promise: every operation in it that is
// not a receive depends on an operation of its own part or of the part just before it.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "collectives/generate.h"
#include "tests/collectives/test_groups.h"

namespace etwire::collectives {
namespace {

using trace::CollectiveType;

std::string describe(const OpView& op) {
  std::string text =
      fmt::format("{} peer {} offset {} length {} chunks {}+{} stride {} step {} qp {} deps",
                  op_kind_name(op.kind), op.peer, op.chunks.first.offset, op.chunks.first.length,
                  op.chunks.chunk_begin, op.chunks.chunk_count, op.chunks.stride, op.step, op.qp);
  for (uint32_t dep : op.deps) text += fmt::format(" {}", dep);
  return text;
}

// Every participant of `spec` in parts of about `target_ops` operations against its whole program.
// Returns the first difference, or "" (and the most parts any member took in `parts`).
std::string compare_parts(const CollectiveSpec& spec, uint64_t target_ops, uint32_t& parts) {
  const ProgramGenerator generator(spec);
  CollectiveProgram whole;
  CollectiveProgram part;
  parts = 0;
  for (uint32_t p = 0; p < generator.spec().participants(); ++p) {
    generator.generate_member(p, whole);
    EmitCursor cursor = generator.begin_parts(p);
    uint64_t previous_first = 0;
    uint32_t count = 0;
    while (generator.next_part(cursor, part, target_ops)) {
      const uint64_t first = cursor.ops - part.ops();
      for (uint32_t i = 0; i < part.ops(0); ++i) {
        const uint64_t index = first + i;
        if (index >= whole.ops(0)) return "member " + std::to_string(p) + ": too many operations";
        const std::string got = describe(part.op(0, i));
        const std::string want = describe(whole.op(0, static_cast<uint32_t>(index)));
        if (got != want) {
          return "member " + std::to_string(p) + " operation " + std::to_string(index) + ": " +
                 got + ", whole program: " + want;
        }
        const OpView op = part.op(0, i);
        if (count == 0 || (!op.is_send() && op.peer != p)) continue;
        bool recent = false;
        for (uint32_t dep : op.deps) recent |= dep >= previous_first;
        if (!recent) {
          return "member " + std::to_string(p) + " operation " + std::to_string(index) + " (part " +
                 std::to_string(count) +
                 ") depends on nothing in its part or the one "
                 "before";
        }
      }
      previous_first = first;
      ++count;
    }
    if (!cursor.done || cursor.ops != whole.ops(0)) {
      return "member " + std::to_string(p) + ": " + std::to_string(cursor.ops) + " of " +
             std::to_string(whole.ops(0)) + " operations emitted";
    }
    parts = std::max(parts, count);
  }
  return "";
}

TEST(ProgramParts, TheRingFamilyInPartsIsItsWholeProgram) {
  testing::for_each_ring_spec({{1, 2, 5, 16}, {1, 4}, {0, 3}, 3}, 11,
                              [&](const CollectiveSpec& spec, const std::string& label) {
                                for (uint64_t target : {1u, 7u, 1000000u}) {
                                  uint32_t parts = 0;
                                  ASSERT_EQ(compare_parts(spec, target, parts), "")
                                      << label << " target " << target;
                                  // One operation a part cuts a ring of 3 or more members (2 steps
                                  // or more) into a part a step.
                                  const size_t n = spec.ranks.size();
                                  if (target == 1 && n > 2 && spec.bytes >= n) {
                                    EXPECT_GT(parts, 1u) << label;
                                  }
                                  if (target == 1000000) {
                                    EXPECT_LE(parts, 1u) << label;
                                  }
                                }
                              });
}

TEST(ProgramParts, OtherAlgorithmsComeInOnePart) {
  for (Algorithm algorithm : {Algorithm::kDirect, Algorithm::kHalvingDoubling,
                              Algorithm::kDoubleBinaryTree, Algorithm::kPat}) {
    CollectiveSpec spec;
    spec.collective =
        algorithm == Algorithm::kDirect ? CollectiveType::kAllToAll : CollectiveType::kAllReduce;
    if (algorithm == Algorithm::kPat) spec.collective = CollectiveType::kAllGather;
    spec.algorithm = algorithm;
    spec.ranks = testing::contiguous_group(8);
    spec.bytes = 1 << 16;
    uint32_t parts = 0;
    ASSERT_EQ(compare_parts(spec, 1, parts), "") << "algorithm " << static_cast<int>(algorithm);
    EXPECT_EQ(parts, 1u);
  }
}

}  // namespace
}  // namespace etwire::collectives

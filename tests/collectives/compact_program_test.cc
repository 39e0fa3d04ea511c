// Compact programs: an operation covers a run of chunks. Expanded chunk by chunk, every program
// must be exactly the per-chunk program its algorithm describes (per_chunk_reference.h): the same
// chunk operations on every QP in the same order, with the same bytes, chunks, steps and
// dependencies. The runs must also really compact, and the accessors agree with each other.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <stdexcept>
#include <tuple>
#include <vector>

#include "collectives/generate.h"
#include "collectives/program_builder.h"
#include "collectives/traffic_stats.h"
#include "tests/collectives/per_chunk_reference.h"
#include "tests/collectives/test_groups.h"

namespace etwire::collectives {
namespace {

using trace::CollectiveType;

// A chunk operation's place in its QP's posting order: (is send, peer, qp, k-th on that QP).
// Two programs agree when the same places hold the same chunk operations.
using Place = std::tuple<bool, uint32_t, uint16_t, uint32_t>;

struct Row {
  OpKind kind;
  ByteRange range;
  uint32_t chunk;
  uint32_t step;
  std::vector<Place> deps;  // sorted
  friend bool operator==(const Row&, const Row&) = default;
};

// Member `m`'s chunk operations by place, dependencies named by place as well.
std::map<Place, Row> rows_of(const CollectiveProgram& program, size_t m) {
  std::map<std::tuple<bool, uint32_t, uint16_t>, uint32_t> posted;
  std::vector<std::vector<Place>> place_of(program.ops(m));  // per operation, per chunk of its run
  for_each_chunk_op(program, m, [&](uint32_t index, const ChunkOpView& op) {
    const auto qp = std::make_tuple(op.is_send(), op.peer, op.qp);
    place_of[index].push_back(std::tuple_cat(qp, std::make_tuple(posted[qp]++)));
  });
  std::map<Place, Row> rows;
  for_each_chunk_op(program, m, [&](uint32_t index, const ChunkOpView& op) {
    const uint32_t first_chunk = program.op(m, index).chunks.chunk_begin;
    Row row{op.kind, op.range, op.chunk, op.step, {}};
    for (uint32_t dep : op.deps) {
      const uint32_t dep_first = program.op(m, dep).chunks.chunk_begin;
      row.deps.push_back(place_of[dep].at(op.chunk - dep_first));
    }
    std::sort(row.deps.begin(), row.deps.end());
    rows.emplace(place_of[index][op.chunk - first_chunk], std::move(row));
  });
  return rows;
}

std::string describe(const Place& place, const Row& row) {
  const auto& [send, peer, qp, k] = place;
  std::string out = send ? "send to " : "recv from ";
  out += std::to_string(peer);
  out += " qp " + std::to_string(qp);
  out += " #" + std::to_string(k);
  out += ": " + std::string(op_kind_name(row.kind));
  out += " [" + std::to_string(row.range.offset);
  out += "+" + std::to_string(row.range.length);
  out += "] chunk " + std::to_string(row.chunk);
  out += " step " + std::to_string(row.step);
  out += " deps " + std::to_string(row.deps.size());
  return out;
}

// "" when both programs hold the same chunk operations, else the first difference.
std::string difference(const CollectiveProgram& compact, const CollectiveProgram& reference) {
  if (compact.programs() != reference.programs()) return "different member counts";
  for (size_t m = 0; m < compact.programs(); ++m) {
    std::string where = "member ";
    where += std::to_string(m);
    if (compact.buffer_bytes(m) != reference.buffer_bytes(m)) return where + ": buffer size";
    if (compact.chunk_ops(m) != reference.chunk_ops(m)) {
      return where + ": " + std::to_string(compact.chunk_ops(m)) + " chunk operations, expected " +
             std::to_string(reference.chunk_ops(m));
    }
    const auto got = rows_of(compact, m);
    const auto want = rows_of(reference, m);
    for (const auto& [place, row] : want) {
      auto it = got.find(place);
      if (it == got.end()) return where + ": missing " + describe(place, row);
      if (!(it->second == row)) {
        return where + ": " + describe(place, it->second) + ", expected " + describe(place, row);
      }
    }
  }
  return "";
}

bool emits_runs(Algorithm algorithm) {
  return algorithm == Algorithm::kRing || algorithm == Algorithm::kBidirectionalRing ||
         algorithm == Algorithm::kDoubleBinaryTree || algorithm == Algorithm::kDirect ||
         algorithm == Algorithm::kTree || algorithm == Algorithm::kPat ||
         algorithm == Algorithm::kNvls || algorithm == Algorithm::kNvlsTree ||
         algorithm == Algorithm::kHierarchical || algorithm == Algorithm::kCollNet;
}

class CompactProgram : public ::testing::TestWithParam<testing::Case> {};

TEST_P(CompactProgram, ExpandsToThePerChunkProgram) {
  const testing::Case& c = GetParam();
  for (uint32_t n : {1u, 2u, 3u, 4u, 5u, 6u, 7u, 8u, 9u, 12u, 16u}) {
    for (uint64_t bytes : {uint64_t{0}, uint64_t{1}, uint64_t{2} * n + 3, uint64_t{97} * n + 13,
                           uint64_t{384} * n}) {
      for (uint32_t chunks : {1u, 2u, 3u, 8u, 64u}) {
        for (uint32_t qps : {1u, 3u}) {
          for (uint64_t alignment : {uint64_t{1}, uint64_t{128}}) {
            CollectiveSpec spec;
            spec.collective = c.collective;
            spec.algorithm = c.algorithm;
            const uint32_t members = c.collective ? n : std::min(n, 2u);
            spec.ranks = testing::sparse_group(members, n * 7 + chunks);
            spec.bytes = bytes;
            spec.root = spec.ranks[(n + chunks) % members];
            if (c.variable_sizes) spec.peer_bytes = testing::uneven_matrix(members, bytes, n);
            spec.chunks = chunks;
            spec.qps = qps;
            spec.qp_alignment = alignment;
            spec.ranks_per_host = testing::lays_over_hosts(c.algorithm) ? 2 : 1;
            testing::add_switch_tree(spec, n + chunks);
            spec.size_convention = n % 2 == 1 ? SizeConvention::kOutput : SizeConvention::kInput;
            const ProgramGenerator generator(spec);
            const CollectiveProgram program = generator.generate();
            const std::string context =
                "n=" + std::to_string(members) + " bytes=" + std::to_string(bytes) +
                " chunks=" + std::to_string(chunks) + " qps=" + std::to_string(qps) +
                " alignment=" + std::to_string(alignment);
            const auto reference = testing::per_chunk_reference(generator.spec());
            if (!reference) {
              // The runs of NVLS and the hierarchical all-reduce are checked by the data executor
              // only (correctness_test.cc, nccl_algorithms_test.cc); every other algorithm
              // without a reference stores one operation per chunk.
              if (emits_runs(c.algorithm)) continue;
              for (size_t m = 0; m < program.programs(); ++m) {
                ASSERT_EQ(program.ops(m), program.chunk_ops(m)) << context;
              }
              continue;
            }
            ASSERT_EQ(difference(program, *reference), "") << context;
          }
        }
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(AllCollectives, CompactProgram, ::testing::ValuesIn(testing::all_cases()),
                         [](const auto& info) { return info.param.name(); });

// When chunks divide the buffer evenly, the run-emitting algorithms store as many operations for
// any number of chunks as for one chunk: the chunk count only multiplies the chunk operations.
TEST(CompactProgramSize, ChunksDoNotMultiplyOperations) {
  for (const testing::Case& c : testing::all_cases()) {
    if (!emits_runs(c.algorithm) || c.variable_sizes) continue;
    for (uint32_t n = 2; n <= 9; ++n) {
      constexpr uint32_t kChunks = 16;
      CollectiveSpec spec;
      spec.collective = c.collective;
      spec.algorithm = c.algorithm;
      spec.ranks = testing::contiguous_group(c.collective ? n : 2);
      spec.bytes = uint64_t{n} * kChunks * 2 * 3;  // every block, chunk and half divides
      spec.chunks = 1;
      const CollectiveProgram one = generate(spec);
      spec.chunks = kChunks;
      const CollectiveProgram many = generate(spec);
      EXPECT_EQ(many.ops(), one.ops()) << c.name() << " n=" << n;
      EXPECT_EQ(many.chunk_ops(), one.ops() * kChunks) << c.name() << " n=" << n;
    }
  }
}

TEST(CompactProgramSize, RingAllReduceIsTwoOperationsPerStepAndQp) {
  // 2(n-1) steps, each a send and a receive per QP piece covering all 64 chunks.
  CollectiveSpec spec;
  spec.collective = CollectiveType::kAllReduce;
  spec.algorithm = Algorithm::kRing;
  spec.ranks = testing::contiguous_group(32);
  spec.bytes = uint64_t{1} << 24;
  spec.chunks = 64;
  spec.qps = 2;
  const CollectiveProgram program = generate(spec);
  for (size_t m = 0; m < program.programs(); ++m) {
    EXPECT_EQ(program.ops(m), 2u * 31 * 2 * 2);
    EXPECT_EQ(program.chunk_ops(m), uint64_t{2} * 31 * 2 * 2 * 64);
  }
  // A size the chunks do not divide: two runs (the longer chunks, the shorter) per transfer.
  spec.bytes = 64 * 32 * 1000 + 5;
  const CollectiveProgram uneven = generate(spec);
  EXPECT_LE(uneven.ops(0), 2u * program.ops(0));
  EXPECT_EQ(uneven.chunk_ops(0), program.chunk_ops(0));
}

TEST(ChunkRun, RangesFollowTheStride) {
  const ChunkRun run{4, 3, {100, 10}, 16};
  EXPECT_EQ(run.chunk_end(), 7u);
  EXPECT_FALSE(run.covers(3));
  EXPECT_TRUE(run.covers(4));
  EXPECT_TRUE(run.covers(6));
  EXPECT_FALSE(run.covers(7));
  EXPECT_EQ(run.range(4), (ByteRange{100, 10}));
  EXPECT_EQ(run.range(6), (ByteRange{132, 10}));
  // Part 1 of 3 of every 10-byte chunk: bytes 4..7 of it (parts of 4, 3, 3).
  const ChunkRun part = run.part(3, 1);
  EXPECT_EQ(part.range(5), (ByteRange{120, 3}));
  EXPECT_EQ(run.part(Partition(10, 3), 1).range(5), part.range(5));
  EXPECT_EQ(ChunkRun::single(9, {5, 6}).range(9), (ByteRange{5, 6}));
}

TEST(ChunkRuns, SplitMatchesPartitionChunkByChunk) {
  for (uint64_t length : {0u, 1u, 5u, 64u, 1000u, 1001u, 1023u}) {
    for (uint32_t chunks : {1u, 2u, 3u, 7u, 64u}) {
      const ByteRange whole{37, length};
      const ChunkRuns runs = ChunkRuns::split(whole, chunks);
      ASSERT_GE(runs.size(), 1u);
      ASSERT_LE(runs.size(), 2u);
      EXPECT_EQ(runs.size() == 1, length % chunks == 0) << length << "/" << chunks;
      uint32_t next = 0;
      for (const ChunkRun& run : runs) {
        ASSERT_EQ(run.chunk_begin, next);
        for (uint32_t k = run.chunk_begin; k < run.chunk_end(); ++k) {
          EXPECT_EQ(run.range(k), Partition::piece(whole, chunks, k)) << length << "/" << chunks;
        }
        next = run.chunk_end();
      }
      EXPECT_EQ(next, chunks);
      // Cutting every chunk the same way keeps the runs exact.
      const ChunkRuns halves = runs.part(2, 1).shifted(1000);
      for (uint32_t r = 0; r < runs.size(); ++r) {
        for (uint32_t k = runs[r].chunk_begin; k < runs[r].chunk_end(); ++k) {
          ByteRange want = Partition::piece(Partition::piece(whole, chunks, k), 2, 1);
          want.offset += 1000;
          EXPECT_EQ(halves[r].range(k), want);
        }
      }
    }
  }
}

TEST(CompactProgramAccessors, ChunkViewsExpandEachOperation) {
  CollectiveSpec spec;
  spec.collective = CollectiveType::kAllReduce;
  spec.algorithm = Algorithm::kRing;
  spec.ranks = {7, 3, 5};
  spec.bytes = 3 * 4 * 10 + 2;  // 4 chunks of 31, 31, 30, 30 bytes: two runs per transfer
  spec.chunks = 4;
  const CollectiveProgram program = generate(spec);
  uint64_t expanded = 0;
  for (size_t m = 0; m < program.programs(); ++m) {
    uint32_t last_index = 0;
    uint32_t last_chunk = 0;
    uint64_t seen = 0;
    for_each_chunk_op(program, m, [&](uint32_t index, const ChunkOpView& op) {
      const OpView run = program.op(m, index);
      ASSERT_TRUE(run.chunks.covers(op.chunk));
      // Operations in order, each one's chunks ascending.
      if (seen > 0) {
        EXPECT_TRUE(index > last_index || (index == last_index && op.chunk == last_chunk + 1));
      }
      last_index = index;
      last_chunk = op.chunk;
      ++seen;
      const ChunkOpView direct = program.op(m, index, op.chunk);
      EXPECT_EQ(direct.range, op.range);
      EXPECT_EQ(direct.range, run.chunks.range(op.chunk));
      EXPECT_EQ(direct.kind, run.kind);
      EXPECT_EQ(direct.qp, run.qp);
      EXPECT_EQ(direct.deps.data(), run.deps.data());
      // Every dependency covers every chunk of the operation.
      for (uint32_t dep : run.deps) {
        EXPECT_LT(dep, index);
        EXPECT_TRUE(program.op(m, dep).chunks.covers(op.chunk));
      }
    });
    EXPECT_EQ(seen, program.chunk_ops(m));
    expanded += seen;
  }
  EXPECT_EQ(expanded, program.chunk_ops());
  EXPECT_LT(program.ops(), program.chunk_ops());
  // Traffic counts chunk operations and every chunk's bytes.
  const auto traffic = member_traffic(program, 1);
  uint64_t sends = 0;
  for (const auto& t : traffic) sends += t.sends;
  uint64_t flow_transfers = 0;
  for (const Flow& f : flows(program)) flow_transfers += f.operations;
  EXPECT_EQ(sends, flow_transfers);
  EXPECT_EQ(sends * 2, program.chunk_ops());
  uint64_t bytes_sent = 0;
  for_each_chunk_op(program, 0, [&](uint32_t, const ChunkOpView& op) {
    if (op.is_send()) bytes_sent += op.range.length;
  });
  EXPECT_EQ(traffic[0].bytes_sent, bytes_sent);
}

TEST(CompactProgramBuilder, DependenciesMustBeChunkWise) {
  CollectiveProgram program;
  const std::vector<int32_t> ranks = {0, 1};
  ProgramBuilder b(program, ranks, 1, 1);
  b.begin_member(0);
  b.set_buffer_bytes(1000);
  const Transfer got = b.recv_run(1, {0, 4, {0, 10}, 10}, {0, 0}, false);
  // Same chunks and stride: chunk k of the send waits for chunk k of the receive.
  const Transfer sent = b.send_run(1, {0, 4, {0, 10}, 10}, {1, 0}, {&got, 1});
  EXPECT_EQ(program.dependencies(), 1u);
  // A sub-run of the receive's chunks is fine too; a run with no chunk in common adds nothing.
  b.send_run(1, {1, 2, {10, 10}, 10}, {1, 0}, {&got, 1});
  b.send_run(1, {4, 2, {40, 10}, 10}, {1, 0}, {&got, 1});
  EXPECT_EQ(program.dependencies(), 2u);
  // Chunks the receive does not have, or a different spacing, cannot be chunk-wise.
  EXPECT_THROW(b.send_run(1, {2, 4, {20, 10}, 10}, {1, 0}, {&got, 1}), std::logic_error);
  EXPECT_THROW(b.send_run(1, {0, 4, {0, 10}, 20}, {1, 0}, {&got, 1}), std::logic_error);
  (void)sent;
}

}  // namespace
}  // namespace etwire::collectives

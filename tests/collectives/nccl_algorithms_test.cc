// NCCL's tree all-reduce (a double binary tree over hosts, a chain inside each, one tree per
// channel), PAT all-gather / reduce-scatter and NVLS / NVLS-tree all-reduce: their shape on the
// wire, and every member's result on real buffers at 2-64 ranks with hosts of mixed sizes.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <string>

#include "collectives/generate.h"
#include "collectives/hosts.h"
#include "collectives/traffic_stats.h"
#include "collectives/tree_layout.h"
#include "collectives/verify.h"
#include "tests/collectives/test_groups.h"

namespace etwire::collectives {
namespace {

using trace::CollectiveType;

CollectiveSpec make(CollectiveType type, Algorithm algorithm, uint32_t n, uint32_t per_host,
                    uint64_t bytes) {
  CollectiveSpec spec;
  spec.collective = type;
  spec.algorithm = algorithm;
  spec.ranks = testing::contiguous_group(n);
  spec.ranks_per_host = per_host;
  spec.bytes = bytes;
  return spec;
}

// Every member reaches the root of each tree by parent links, each child names its parent, and
// there are n-1 edges.
void expect_spanning(const Tree& tree, uint32_t n, const std::string& where) {
  uint32_t roots = 0;
  uint32_t edges = 0;
  for (uint32_t p = 0; p < n; ++p) {
    if (tree.parent[p] == kNoMember) ++roots;
    for (uint32_t child : tree.children[p]) {
      if (child == kNoMember) continue;
      ++edges;
      EXPECT_EQ(tree.parent[child], p) << where;
    }
    uint32_t up = p;
    for (uint32_t hops = 0; tree.parent[up] != kNoMember; ++hops) {
      up = tree.parent[up];
      ASSERT_LT(hops, n) << where << ": a cycle above member " << p;
    }
  }
  EXPECT_EQ(roots, 1u) << where;
  EXPECT_EQ(edges, n - 1) << where;
}

TEST(NcclTree, EachChannelSpansTheGroupAndCrossesHostsOnOneRail) {
  for (uint32_t hosts : {1u, 2u, 3u, 5u, 8u}) {
    for (uint32_t channels : {1u, 2u, 8u}) {
      CollectiveSpec spec = make(CollectiveType::kAllReduce, Algorithm::kTree, hosts * 8, 8, 64);
      spec.channels = channels;
      const ResolvedSpec resolved = resolve(spec);
      const std::vector<Tree> trees = all_reduce_trees(resolved);
      ASSERT_EQ(trees.size(), channels);
      const HostGrouping grouping{8};
      for (uint32_t c = 0; c < channels; ++c) {
        const std::string where = std::to_string(hosts) + " hosts, channel " + std::to_string(c) +
                                  " of " + std::to_string(channels);
        expect_spanning(trees[c], spec.ranks.size(), where);
        for (uint32_t p = 0; p < spec.ranks.size(); ++p) {
          const uint32_t up = trees[c].parent[p];
          if (up == kNoMember || grouping.same_host(spec.ranks[p], spec.ranks[up])) continue;
          EXPECT_EQ(grouping.local_index(spec.ranks[p]), c % 8) << where << ", member " << p;
          EXPECT_EQ(grouping.local_index(spec.ranks[up]), c % 8) << where << ", member " << up;
        }
      }
    }
  }
}

TEST(NcclTree, WithOneRankPerHostItIsTheDoubleBinaryTree) {
  for (uint32_t n : {2u, 5u, 16u, 33u}) {
    CollectiveSpec spec = make(CollectiveType::kAllReduce, Algorithm::kTree, n, 1, 1000 * n);
    spec.chunks = 3;
    const CollectiveProgram tree = generate(spec);
    spec.algorithm = Algorithm::kDoubleBinaryTree;
    const CollectiveProgram dbt = generate(spec);
    ASSERT_EQ(tree.programs(), dbt.programs());
    for (size_t m = 0; m < tree.programs(); ++m) {
      ASSERT_EQ(tree.ops(m), dbt.ops(m)) << "n=" << n;
      for (uint32_t i = 0; i < tree.ops(m); ++i) {
        const OpView a = tree.op(m, i);
        const OpView b = dbt.op(m, i);
        EXPECT_EQ(a.peer, b.peer);
        EXPECT_EQ(a.kind, b.kind);
        EXPECT_EQ(a.qp, b.qp);
        EXPECT_EQ(a.bytes(), b.bytes());
      }
    }
  }
}

TEST(NcclTree, EightChannelsOverTwoServersLoadEveryNicAlike) {
  // Two servers of eight: channel c enters both servers on rail c, so each NIC carries one
  // channel's share (F/8) up or down the inter-server edge.
  CollectiveSpec spec =
      make(CollectiveType::kAllReduce, Algorithm::kTree, 16, 8, uint64_t{8} * 4096);
  spec.channels = 8;
  ProgramGenerator generator(spec);
  const CollectiveProgram program = generator.generate();
  ASSERT_EQ(verify(generator.spec(), program), "");
  const auto traffic = member_traffic(program, 8);
  for (uint32_t p = 0; p < 16; ++p) {
    EXPECT_EQ(traffic[p].network_bytes_sent, spec.bytes / 8) << "member " << p;
  }
}

TEST(NcclTree, EveryMemberEndsWithTheSum) {
  uint64_t seed = 1;
  for (uint32_t n : {2u, 3u, 7u, 16u, 24u, 40u, 64u}) {
    for (uint32_t per_host : {1u, 3u, 4u, 8u}) {
      for (uint32_t channels : {0u, 1u, 3u, 8u}) {
        ++seed;
        CollectiveSpec spec =
            make(CollectiveType::kAllReduce, Algorithm::kTree, n, per_host, 31 * n + seed % 11);
        if (channels > 0) spec.channels = channels;
        ASSERT_EQ(testing::verify_varied(spec, seed), "");
      }
    }
  }
}

TEST(Pat, LongHopsCarryOneBlockAndTheNeighbourHalfOfThem) {
  // 16 members: 4 steps at distances 8, 4, 2, 1 (all-gather) carrying 1, 2, 4 and 8 blocks.
  for (CollectiveType type : {CollectiveType::kAllGather, CollectiveType::kReduceScatter}) {
    const ProgramGenerator generator(make(type, Algorithm::kPat, 16, 1, 16 * 64));
    const CollectiveProgram program = generator.generate();
    const uint64_t block = generator.spec().layout.block(0).length;
    const bool gather = type == CollectiveType::kAllGather;
    for (size_t m = 0; m < program.programs(); ++m) {
      const uint32_t x = program.position(m);
      std::map<uint32_t, std::pair<uint32_t, uint32_t>> sends;  // step -> (blocks, distance)
      for (uint32_t i = 0; i < program.ops(m); ++i) {
        const OpView op = program.op(m, i);
        if (!op.is_send()) continue;
        ++sends[op.step].first;
        sends[op.step].second = (op.peer + 16 - x) % 16;
      }
      ASSERT_EQ(sends.size(), 4u);
      for (uint32_t t = 0; t < 4; ++t) {
        const uint32_t d = gather ? 3 - t : t;
        EXPECT_EQ(sends[t].first, 8u >> d) << "member " << x << " step " << t;
        EXPECT_EQ(sends[t].second, gather ? 1u << d : 16 - (1u << d))
            << "member " << x << " step " << t;
      }
    }
    const auto traffic = member_traffic(program, 1);
    for (const MemberTraffic& t : traffic) EXPECT_EQ(t.bytes_sent, 15 * block);
  }
}

TEST(Pat, EveryMemberEndsWithItsResult) {
  uint64_t seed = 7;
  for (CollectiveType type : {CollectiveType::kAllGather, CollectiveType::kReduceScatter}) {
    for (uint32_t n : {2u, 3u, 6u, 17u, 31u, 48u, 64u}) {
      for (uint32_t per_host : {1u, 3u, 8u}) {
        ++seed;
        const CollectiveSpec spec = make(type, Algorithm::kPat, n, per_host, 13 * n + seed % 5);
        ASSERT_EQ(testing::verify_varied(spec, seed), "");
      }
    }
  }
}

TEST(Nvls, EachNicCarriesItsOwnSliceAndOnlyTheMiddlePhaseLeavesTheServer) {
  // Two servers of eight: GPU j owns slice j (F/8); phases 1 and 3 stay inside the server, the
  // middle one crosses it on rail j only.
  for (Algorithm algorithm : {Algorithm::kNvls, Algorithm::kNvlsTree}) {
    const CollectiveSpec spec =
        make(CollectiveType::kAllReduce, algorithm, 16, 8, uint64_t{8} * 2 * 4096);
    ProgramGenerator generator(spec);
    const CollectiveProgram program = generator.generate();
    ASSERT_EQ(verify(generator.spec(), program), "");
    const HostGrouping hosts{8};
    uint32_t last_step = 0;
    for (size_t m = 0; m < program.programs(); ++m) {
      for (uint32_t i = 0; i < program.ops(m); ++i)
        last_step = std::max(last_step, program.op(m, i).step);
    }
    for (size_t m = 0; m < program.programs(); ++m) {
      const int32_t self = spec.ranks[program.position(m)];
      for (uint32_t i = 0; i < program.ops(m); ++i) {
        const OpView op = program.op(m, i);
        const int32_t peer = spec.ranks[op.peer];
        const bool inside = hosts.same_host(self, peer);
        EXPECT_EQ(inside, op.step == 0 || op.step == last_step)
            << algorithm_name(algorithm) << " member " << self << " step " << op.step;
        if (!inside) {
          EXPECT_EQ(hosts.local_index(self), hosts.local_index(peer));
        }
      }
    }
    for (const MemberTraffic& t : member_traffic(program, 8)) {
      EXPECT_EQ(t.network_bytes_sent, spec.bytes / 8) << algorithm_name(algorithm);
    }
  }
}

TEST(Nvls, EveryMemberEndsWithTheSum) {
  uint64_t seed = 3;
  for (Algorithm algorithm : {Algorithm::kNvls, Algorithm::kNvlsTree, Algorithm::kHierarchical}) {
    for (uint32_t n : {2u, 3u, 7u, 16u, 24u, 40u, 64u}) {
      for (uint32_t per_host : {1u, 3u, 4u, 8u}) {
        ++seed;
        const CollectiveSpec spec =
            make(CollectiveType::kAllReduce, algorithm, n, per_host, 37 * n + seed % 13);
        ASSERT_EQ(testing::verify_varied(spec, seed), "");
      }
    }
  }
}

TEST(Hierarchical, RingsInsideTheHostAndBetweenHostsInThreePhases) {
  // Two hosts of four: reduce-scatter steps 0-2 inside the host, the ring between the two hosts
  // steps 3-4 on the member's rail, all-gather steps 5-7 inside the host; each member sends 3/4 F
  // inside the host twice and its slice (F/4) over the network, half in each of the two steps.
  const CollectiveSpec spec =
      make(CollectiveType::kAllReduce, Algorithm::kHierarchical, 8, 4, uint64_t{4} * 2 * 1024);
  ProgramGenerator generator(spec);
  const CollectiveProgram program = generator.generate();
  ASSERT_EQ(verify(generator.spec(), program), "");
  const HostGrouping hosts{4};
  for (size_t m = 0; m < program.programs(); ++m) {
    const int32_t self = spec.ranks[program.position(m)];
    std::map<uint32_t, uint32_t> sends_per_step;
    for (uint32_t i = 0; i < program.ops(m); ++i) {
      const OpView op = program.op(m, i);
      const int32_t peer = spec.ranks[op.peer];
      const bool network = op.step == 3 || op.step == 4;
      EXPECT_EQ(hosts.same_host(self, peer), !network) << "member " << self << " step " << op.step;
      if (network) {
        EXPECT_EQ(hosts.local_index(self), hosts.local_index(peer));
      }
      if (op.is_send()) ++sends_per_step[op.step];
    }
    EXPECT_EQ(sends_per_step.size(), 8u) << "member " << self;
  }
  for (const MemberTraffic& t : member_traffic(program, 4)) {
    EXPECT_EQ(t.network_bytes_sent, spec.bytes / 4);
    EXPECT_EQ(t.bytes_sent, 2 * spec.bytes * 3 / 4 + spec.bytes / 4);
  }
}

TEST(NcclAlgorithms, RefusedWhereTheyDoNotApply) {
  CollectiveSpec spec = make(CollectiveType::kAllReduce, Algorithm::kPat, 4, 1, 64);
  EXPECT_THROW(resolve(spec), SpecError);
  spec = make(CollectiveType::kAllGather, Algorithm::kTree, 4, 1, 64);
  EXPECT_THROW(resolve(spec), SpecError);
  spec = make(CollectiveType::kAllGather, Algorithm::kPat, 4, 1, 64);
  spec.channels = 2;
  EXPECT_THROW(resolve(spec), SpecError);
  EXPECT_EQ(parse_algorithm("tree"), Algorithm::kTree);
  EXPECT_EQ(parse_algorithm("PAT"), Algorithm::kPat);
}

}  // namespace
}  // namespace etwire::collectives

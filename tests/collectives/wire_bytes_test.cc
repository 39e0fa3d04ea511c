// Bytes each member puts on the wire equal each algorithm's formula: exactly when the buffer
// divides evenly, and in total (with the remainders) when it does not. The busiest member of a
// bandwidth-optimal algorithm sends exactly busbw_factor x F, which ties the programs to the
// nccl-tests definitions.
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <numeric>

#include "collectives/bandwidth.h"
#include "collectives/generate.h"
#include "collectives/hosts.h"
#include "collectives/traffic_stats.h"
#include "tests/collectives/test_groups.h"

namespace etwire::collectives {
namespace {

using trace::CollectiveType;

struct Measured {
  ResolvedSpec spec;
  std::vector<MemberTraffic> traffic;
  uint64_t total() const {
    uint64_t sum = 0;
    for (const auto& t : traffic) sum += t.bytes_sent;
    return sum;
  }
  uint64_t busiest() const {
    uint64_t most = 0;
    for (const auto& t : traffic) most = std::max(most, t.bytes_sent);
    return most;
  }
  uint64_t full() const { return spec.layout.full_bytes(); }
};

Measured measure(CollectiveKind kind, Algorithm algorithm, uint32_t n, uint64_t bytes,
                 uint32_t chunks = 1, uint32_t qps = 1, uint64_t seed = 7) {
  CollectiveSpec spec;
  spec.collective = kind;
  spec.algorithm = algorithm;
  spec.ranks = testing::sparse_group(n, seed);
  spec.bytes = bytes;
  spec.root = spec.ranks[n / 2];
  spec.chunks = chunks;
  spec.qps = qps;
  spec.qp_alignment = 1;
  ProgramGenerator generator(spec);
  return {generator.spec(), member_traffic(generator.generate(), 1)};
}

TEST(WireBytes, RingAllReduceSendsTwiceTheShareOfEveryByte) {
  for (Algorithm algorithm : {Algorithm::kRing, Algorithm::kBidirectionalRing}) {
    for (uint32_t n = 2; n <= 17; ++n) {
      // Divisible: every member sends exactly 2(n-1)/n x S.
      const uint64_t even = uint64_t{n} * 3 * 2 * 4;
      auto m = measure(CollectiveType::kAllReduce, algorithm, n, even, 3, 2);
      for (const auto& t : m.traffic) EXPECT_EQ(t.bytes_sent, 2 * (n - 1) * even / n) << n;
      EXPECT_DOUBLE_EQ(double(m.busiest()) / double(m.full()),
                       busbw_factor(CollectiveType::kAllReduce, n));
      // Not divisible: every block still travels 2(n-1) times in total.
      const uint64_t odd = uint64_t{n} * 5 + 3;
      m = measure(CollectiveType::kAllReduce, algorithm, n, odd, 2, 3);
      EXPECT_EQ(m.total(), 2ull * (n - 1) * odd) << n;
      for (const auto& t : m.traffic) {
        EXPECT_NEAR(double(t.bytes_sent), 2.0 * (n - 1) * odd / n, 2.0 * (n - 1) * 2 * 2) << n;
      }
    }
  }
}

TEST(WireBytes, HalvingDoublingAllReduceFoldsTheExtraRanks) {
  for (uint32_t n = 2; n <= 33; ++n) {
    const uint32_t pow2 = std::bit_floor(n);
    const uint32_t extras = n - pow2;
    const uint64_t bytes = uint64_t{pow2} * 8;
    auto m = measure(CollectiveType::kAllReduce, Algorithm::kHalvingDoubling, n, bytes);
    const uint64_t core = 2 * (pow2 - 1) * bytes / pow2;
    for (uint32_t p = 0; p < n; ++p) {
      const uint64_t expected = p < 2 * extras ? (p % 2 == 1 ? bytes : core + bytes) : core;
      EXPECT_EQ(m.traffic[p].bytes_sent, expected) << "n=" << n << " p=" << p;
    }
    // Odd sizes: the same totals, with the remainders.
    auto odd = measure(CollectiveType::kAllReduce, Algorithm::kHalvingDoubling, n, 7 * n + 5, 3);
    EXPECT_EQ(odd.total(), 2ull * (pow2 - 1) * (7 * n + 5) + 2ull * extras * (7 * n + 5)) << n;
  }
}

TEST(WireBytes, ReduceScatterAndAllGatherSendTheShareOfEveryByte) {
  for (CollectiveType type : {CollectiveType::kReduceScatter, CollectiveType::kReduceScatterBlock,
                              CollectiveType::kAllGather}) {
    for (Algorithm algorithm : {Algorithm::kRing, Algorithm::kBidirectionalRing,
                                Algorithm::kHalvingDoubling, Algorithm::kDirect}) {
      for (uint32_t n = 1; n <= 16; ++n) {
        const bool pow2 = std::has_single_bit(n);
        // comm_size: the reduce-scatter input, the all-gather shard (input convention).
        const uint64_t bytes = type == CollectiveType::kAllGather ? 12 : uint64_t{n} * 12;
        auto m = measure(type, algorithm, n, bytes, 2, 2);
        const uint64_t full = m.full();
        ASSERT_EQ(full, uint64_t{n} * 12);
        if (algorithm != Algorithm::kHalvingDoubling || pow2) {
          for (const auto& t : m.traffic) EXPECT_EQ(t.bytes_sent, (n - 1) * full / n) << n;
          EXPECT_DOUBLE_EQ(double(m.busiest()) / double(full), busbw_factor(type, n));
        } else {
          const uint64_t extras = n - std::bit_floor(n);
          // Folded ranks send their input (reduce-scatter) or block (all-gather) once, and get
          // their block (reduce-scatter) or the rest (all-gather) back.
          const uint64_t expected = (std::bit_floor(n) - 1) * full + extras * full +
                                    (type == CollectiveType::kAllGather ? 0 : extras * 12);
          EXPECT_EQ(m.total(), expected) << n;
        }
        if (algorithm != Algorithm::kHalvingDoubling) {
          auto odd =
              measure(type, algorithm, n, type == CollectiveType::kAllGather ? 5 : 5 * n + 3);
          EXPECT_EQ(odd.total(), uint64_t{n - 1} * odd.full()) << n;
        }
      }
    }
  }
}

TEST(WireBytes, DoubleBinaryTreeMovesEveryHalfUpAndDownEachEdge) {
  for (uint32_t n = 2; n <= 33; ++n) {
    const uint64_t bytes = 1000 * n + 1;
    auto m = measure(CollectiveType::kAllReduce, Algorithm::kDoubleBinaryTree, n, bytes, 4);
    EXPECT_EQ(m.total(), 2ull * (n - 1) * bytes) << n;
    // Complementary trees: no member is inner in both, so none sends more than about 2S.
    EXPECT_LE(m.busiest(), 2 * bytes + 8) << n;
  }
}

TEST(WireBytes, AllToAllSendsEveryPeerItsBlock) {
  for (uint32_t n = 1; n <= 20; ++n) {
    auto m = measure(CollectiveType::kAllToAll, Algorithm::kDirect, n, uint64_t{n} * 64, 3, 2);
    for (const auto& t : m.traffic) EXPECT_EQ(t.bytes_sent, (n - 1) * 64ull) << n;
    EXPECT_DOUBLE_EQ(double(m.busiest()) / double(m.full()),
                     busbw_factor(CollectiveType::kAllToAll, n));
  }
}

TEST(WireBytes, PxnPutsTheSameBytesOnTheNetworkAsDirectButOnlyOnRails) {
  for (uint32_t hosts_of : {2u, 4u, 8u}) {
    for (uint32_t n : {4u, 8u, 12u, 16u, 24u, 32u}) {
      for (bool contiguous : {true, false}) {
        CollectiveSpec spec;
        spec.collective = CollectiveType::kAllToAll;
        spec.ranks = contiguous ? testing::contiguous_group(n) : testing::sparse_group(n, n);
        spec.peer_bytes = testing::uneven_matrix(n, 4000, n + hosts_of);
        spec.ranks_per_host = hosts_of;
        spec.chunks = 2;
        spec.algorithm = Algorithm::kDirect;
        ProgramGenerator direct(spec);
        spec.algorithm = Algorithm::kPxn;
        ProgramGenerator pxn(spec);
        const CollectiveProgram pxn_program = pxn.generate();
        uint64_t direct_network = 0;
        uint64_t pxn_network = 0;
        for (const auto& t : member_traffic(direct.generate(), hosts_of)) {
          direct_network += t.network_bytes_sent;
        }
        for (const auto& t : member_traffic(pxn_program, hosts_of))
          pxn_network += t.network_bytes_sent;
        EXPECT_EQ(pxn_network, direct_network);
        // With every host fully populated, every network flow is rail-aligned.
        if (contiguous && n % hosts_of == 0) {
          const HostGrouping hosts{hosts_of};
          for (const Flow& f : flows(pxn_program)) {
            const int32_t src = spec.ranks[f.src];
            const int32_t dst = spec.ranks[f.dst];
            if (!hosts.same_host(src, dst)) {
              EXPECT_EQ(hosts.local_index(src), hosts.local_index(dst)) << src << "->" << dst;
            }
          }
        }
      }
    }
  }
}

TEST(WireBytes, RootedCollectives) {
  for (uint32_t n = 1; n <= 12; ++n) {
    const uint64_t bytes = 100 * n + 7;
    for (Algorithm algorithm : {Algorithm::kRing, Algorithm::kDirect}) {
      auto bcast = measure(CollectiveType::kBroadcast, algorithm, n, bytes, 3);
      auto reduce = measure(CollectiveType::kReduce, algorithm, n, bytes, 3);
      EXPECT_EQ(bcast.total(), (n - 1) * bytes);
      EXPECT_EQ(reduce.total(), (n - 1) * bytes);
      const uint32_t root = bcast.spec.root;
      EXPECT_EQ(bcast.traffic[root].bytes_sent,
                n == 1 ? 0 : (algorithm == Algorithm::kRing ? bytes : (n - 1) * bytes));
      EXPECT_EQ(reduce.traffic[root].bytes_sent, 0u);
      for (uint32_t p = 0; p < n; ++p) {
        if (p != root) {
          EXPECT_EQ(reduce.traffic[p].bytes_sent, bytes);
        }
      }
      // A chain's busiest member sends the buffer once: busbw factor 1.
      if (algorithm == Algorithm::kRing && n > 1) {
        EXPECT_EQ(bcast.busiest(), bytes);
        EXPECT_EQ(busbw_factor(CollectiveType::kBroadcast, n), 1.0);
      }
    }
    auto gather = measure(CollectiveType::kGather, Algorithm::kDirect, n, 9);
    auto scatter = measure(CollectiveType::kScatter, Algorithm::kDirect, n, 9 * n + 4);
    EXPECT_EQ(gather.total(), (n - 1) * 9ull);
    const ByteRange root_block = scatter.spec.layout.block(scatter.spec.root);
    EXPECT_EQ(scatter.traffic[scatter.spec.root].bytes_sent, 9 * n + 4 - root_block.length);
  }
}

TEST(WireBytes, BarrierAndSendRecv) {
  for (uint32_t n = 1; n <= 33; ++n) {
    auto barrier = measure(CollectiveType::kBarrier, Algorithm::kDissemination, n, 0);
    const uint64_t rounds = n == 1 ? 0 : std::bit_width(n - 1);
    for (const auto& t : barrier.traffic) EXPECT_EQ(t.bytes_sent, rounds * 8) << n;
  }
  auto p2p = measure(std::nullopt, Algorithm::kDirect, 2, 12345, 4, 3);
  EXPECT_EQ(p2p.traffic[0].bytes_sent, 12345u);
  EXPECT_EQ(p2p.traffic[1].bytes_sent, 0u);
  EXPECT_EQ(p2p.traffic[1].bytes_received, 12345u);
}

TEST(WireBytes, QpsSplitEachTransferEvenlyWithAlignment) {
  CollectiveSpec spec;
  spec.collective = std::nullopt;
  spec.ranks = {3, 9};
  spec.bytes = 1000;
  spec.qps = 4;
  spec.qp_alignment = 128;
  const CollectiveProgram program = generate(spec);
  // ceil(1000 / 4) = 250 -> 256 per QP: 256, 256, 256, 232.
  ASSERT_EQ(program.ops(0), 4u);
  for (uint32_t i = 0; i < 4; ++i) {
    EXPECT_EQ(program.op(0, i).qp, i);
    EXPECT_EQ(program.op(0, i, 0).range.length, i < 3 ? 256u : 232u);
  }
  spec.bytes = 200;  // ceil(200 / 4) = 50 -> 128: two QPs carry it all
  const CollectiveProgram small = generate(spec);
  ASSERT_EQ(small.ops(0), 2u);
  EXPECT_EQ(small.op(0, 1, 0).range.length, 72u);
}

}  // namespace
}  // namespace etwire::collectives

// `auto`: the tuner's model picks LL for small collectives, LL128 in the middle and Simple for
// large ones, as NCCL's would on two 8-GPU servers with 8 NICs each; it weighs only what NCCL
// weighs (ring, tree, NVLS, NVLS-tree and PAT, each where NCCL runs it), and its times follow the
// model's formula.
#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>
#include <vector>

#include "collectives/tuner.h"

namespace etwire::collectives {
namespace {

using config::Protocol;

// Two servers of eight ranks, eight channels, 400 Gb/s NICs and NVLink inside.
CollectiveSpec two_servers(trace::CollectiveType type, uint64_t bytes) {
  CollectiveSpec spec;
  spec.collective = type;
  spec.ranks.resize(16);
  std::iota(spec.ranks.begin(), spec.ranks.end(), 0);
  spec.ranks_per_host = 8;
  spec.channels = 8;
  spec.algorithm = Algorithm::kRing;
  spec.bytes = bytes;
  return spec;
}

const TunerLinks kLinks{50e9, 450e9};

double time_of(const ProtocolChoice& choice, Protocol p) {
  return choice.time_us[static_cast<size_t>(p)];
}

TEST(ProtocolTuner, RingAllReducePicksLlThenLl128ThenSimpleAsSizeGrows) {
  const auto pick = [](uint64_t bytes) {
    return tune_protocol(two_servers(trace::CollectiveType::kAllReduce, bytes), kLinks).protocol;
  };
  EXPECT_EQ(pick(4 << 10), Protocol::kLl);
  EXPECT_EQ(pick(64 << 10), Protocol::kLl);
  EXPECT_EQ(pick(1 << 20), Protocol::kLl128);
  EXPECT_EQ(pick(16 << 20), Protocol::kLl128);
  EXPECT_EQ(pick(256 << 20), Protocol::kSimple);
}

// The model's times by hand: 30 steps, two of them between the servers.
TEST(ProtocolTuner, TimesFollowTheModel) {
  const ProtocolChoice small =
      tune_protocol(two_servers(trace::CollectiveType::kAllReduce, 4096), kLinks);
  // LL: 6.6 base + 28 steps at the host's 1 us network overhead + 2 network hops of 2.7 us; its
  // bus bandwidth is capped at 39 GB/s, algbw 39 x 16 / 30.
  EXPECT_NEAR(time_of(small, Protocol::kLl), 40.0 + 4096 / (1000 * 39.0 * 16 / 30), 1e-9);
  // LL128: 14 + 28 x 1.9 + 2 x 4.0, its bandwidth 8 channels x 36.7 GB/s.
  EXPECT_NEAR(time_of(small, Protocol::kLl128), 75.2 + 4096 / (1000 * 293.6 * 16 / 30), 1e-9);
  // Simple: 8.4 + 28 x 3.4 + 2 x 14 (each channel's share of a rank, 32 bytes, is below 64)...
  EXPECT_NEAR(time_of(small, Protocol::kSimple), 131.6 + 4096 / (1000 * 400.0 * 16 / 30), 1e-9);
  // ... and 1.4 times that latency once it is 64 bytes or more.
  const ProtocolChoice larger =
      tune_protocol(two_servers(trace::CollectiveType::kAllReduce, 8192), kLinks);
  EXPECT_NEAR(time_of(larger, Protocol::kSimple), 131.6 * 1.4 + 8192 / (1000 * 400.0 * 16 / 30),
              1e-9);
}

TEST(ProtocolTuner, AllGatherCountsTheWholeOutput) {
  CollectiveSpec input = two_servers(trace::CollectiveType::kAllGather, 1 << 20);
  CollectiveSpec output = input;
  output.size_convention = SizeConvention::kOutput;
  output.bytes = 16 << 20;
  const ProtocolChoice a = tune_protocol(input, kLinks);
  const ProtocolChoice b = tune_protocol(output, kLinks);
  for (int p = 0; p < config::kProtocolCount; ++p) {
    EXPECT_DOUBLE_EQ(a.time_us[static_cast<size_t>(p)], b.time_us[static_cast<size_t>(p)]);
  }
}

TEST(ProtocolTuner, TheTreeIsWeighedForAllReduceOnly) {
  CollectiveSpec tree = two_servers(trace::CollectiveType::kAllReduce, 64 << 10);
  tree.algorithm = Algorithm::kTree;
  tree.channels.reset();
  const ProtocolChoice all_reduce = tune_protocol(tree, kLinks);
  EXPECT_EQ(all_reduce.protocol, Protocol::kLl);
  // 6.8 + 2 x (7 x 0.6 + 1 x 5.0); two trees on two NICs: min(100 x 0.92, 2 x 41.4) GB/s, LL
  // a 3.8th of it, 0.6 of that at 64 KiB, and a tree's algbw half its bus bandwidth.
  const double ll_bus = std::min(82.8 / 3.8, 39.0) * 0.6;
  EXPECT_NEAR(time_of(all_reduce, Protocol::kLl), 25.2 + 65536 / (1000 * ll_bus * 0.5), 1e-9);
  CollectiveSpec all_gather = tree;
  all_gather.collective = trace::CollectiveType::kAllGather;
  EXPECT_LT(tune_protocol(all_gather, kLinks).time_us[0], 0) << "no tree all-gather in NCCL";
}

TEST(ProtocolTuner, OtherAlgorithmsRunSimpleAndWeighNothing) {
  for (const Algorithm algorithm :
       {Algorithm::kHalvingDoubling, Algorithm::kBidirectionalRing, Algorithm::kHierarchical}) {
    CollectiveSpec spec = two_servers(trace::CollectiveType::kAllReduce, 4096);
    spec.algorithm = algorithm;
    const ProtocolChoice choice = tune_protocol(spec, kLinks);
    EXPECT_EQ(choice.protocol, Protocol::kSimple);
    for (double t : choice.time_us) EXPECT_LT(t, 0);
  }
  CollectiveSpec all_to_all = two_servers(trace::CollectiveType::kAllToAll, 4096);
  all_to_all.algorithm = Algorithm::kDirect;
  EXPECT_EQ(tune_protocol(all_to_all, kLinks).protocol, Protocol::kSimple);
}

// The ring's pick never steps back as the size grows (LL, then LL128, then Simple), on any
// number of servers, ranks per server and channels: each protocol's line is steeper and starts
// higher than the next one's.
TEST(ProtocolTuner, TheRingsPickOnlyMovesForwardWithSize) {
  for (uint32_t servers : {1u, 2u, 4u, 16u, 128u}) {
    for (uint32_t per_server : {1u, 4u, 8u}) {
      for (uint32_t channels : {1u, 2u, 8u, 16u}) {
        if (servers * per_server < 2) continue;
        CollectiveSpec spec = two_servers(trace::CollectiveType::kAllReduce, 0);
        spec.ranks.resize(servers * per_server);
        std::iota(spec.ranks.begin(), spec.ranks.end(), 0);
        spec.ranks_per_host = per_server;
        spec.channels = channels;
        int last = 0;  // NCCL's order: LL 0, LL128 1, Simple 2
        for (uint64_t bytes = 1; bytes <= (uint64_t{4} << 30); bytes *= 2) {
          spec.bytes = bytes;
          const Protocol p = tune_protocol(spec, kLinks).protocol;
          const int order = p == Protocol::kLl ? 0 : p == Protocol::kLl128 ? 1 : 2;
          EXPECT_GE(order, last) << servers << " x " << per_server << ", " << channels
                                 << " channels, " << bytes << " bytes";
          last = order;
        }
      }
    }
  }
}

// On one server the ring runs over NVLink: no network hops, and LL's cap is the single-server one.
TEST(ProtocolTuner, OneServerUsesTheHostsInterconnect) {
  CollectiveSpec spec = two_servers(trace::CollectiveType::kAllReduce, 4096);
  spec.ranks.resize(8);
  const ProtocolChoice choice = tune_protocol(spec, kLinks);
  // 6.6 + 14 x 0.6; LL's bus bandwidth min(450 x 0.5, 141).
  EXPECT_NEAR(time_of(choice, Protocol::kLl), 15.0 + 4096 / (1000 * 141.0 * 8 / 14), 1e-9);
  EXPECT_EQ(choice.protocol, Protocol::kLl);
}

TEST(Tuner, WeighsWhatNcclWeighsPerCollective) {
  using trace::CollectiveType;
  const auto all_reduce = tuner_algorithms(CollectiveType::kAllReduce);
  EXPECT_EQ(std::vector<Algorithm>(all_reduce.begin(), all_reduce.end()),
            (std::vector<Algorithm>{Algorithm::kTree, Algorithm::kRing, Algorithm::kNvls,
                                    Algorithm::kNvlsTree}));
  for (const CollectiveType type : {CollectiveType::kAllGather, CollectiveType::kReduceScatter,
                                    CollectiveType::kReduceScatterBlock}) {
    const auto list = tuner_algorithms(type);
    EXPECT_EQ(std::vector<Algorithm>(list.begin(), list.end()),
              (std::vector<Algorithm>{Algorithm::kRing, Algorithm::kPat}));
  }
  for (const CollectiveType type :
       {CollectiveType::kBroadcast, CollectiveType::kReduce, CollectiveType::kAllToAll,
        CollectiveType::kGather, CollectiveType::kScatter, CollectiveType::kBarrier}) {
    EXPECT_TRUE(tuner_algorithms(type).empty());
  }
}

// NVLS reduces in one server's switch: 25 us, the host's interconnect at 5/6. Across servers it
// needs CollNet in NCCL, so it is no candidate there; NVLS-tree is, and not on one server.
TEST(Tuner, NvlsOnOneServerAndNvlsTreeAcrossServers) {
  CollectiveSpec one = two_servers(trace::CollectiveType::kAllReduce, 64 << 20);
  one.ranks.resize(8);
  one.algorithm = Algorithm::kNvls;
  one.channels.reset();
  const ProtocolChoice nvls = tune_protocol(one, kLinks);
  EXPECT_EQ(nvls.protocol, Protocol::kSimple);
  EXPECT_LT(time_of(nvls, Protocol::kLl), 0);
  EXPECT_LT(time_of(nvls, Protocol::kLl128), 0);
  EXPECT_NEAR(time_of(nvls, Protocol::kSimple), 25.0 + (64 << 20) / (1000 * 450.0 * 5 / 6), 1e-9);
  one.algorithm = Algorithm::kNvlsTree;
  EXPECT_LT(time_of(tune_protocol(one, kLinks), Protocol::kSimple), 0);

  CollectiveSpec two = two_servers(trace::CollectiveType::kAllReduce, 64 << 20);
  two.algorithm = Algorithm::kNvls;
  two.channels.reset();
  EXPECT_LT(time_of(tune_protocol(two, kLinks), Protocol::kSimple), 0);
  // NVLS-tree: 25 + 2 x log2(2) x 14 us; each server's eight NICs (400 GB/s) under its NVLink.
  two.algorithm = Algorithm::kNvlsTree;
  EXPECT_NEAR(time_of(tune_protocol(two, kLinks), Protocol::kSimple),
              53.0 + (64 << 20) / (1000 * 400.0 * 5 / 6), 1e-9);
  // Past two servers the tree between them gets half the NICs' bandwidth.
  two.ranks.resize(32);
  std::iota(two.ranks.begin(), two.ranks.end(), 0);
  EXPECT_NEAR(time_of(tune_protocol(two, kLinks), Protocol::kSimple),
              25.0 + 2 * 2 * 14.0 + (64 << 20) / (1000 * 200.0 * 5 / 6), 1e-9);
}

// PAT runs with one rank per server only, Simple: 8 us, log2(servers) network hops of 14 / 3.5
// us and 2.8 us per rank, the NIC at 85 %.
TEST(Tuner, PatWithOneRankPerServer) {
  CollectiveSpec spec = two_servers(trace::CollectiveType::kAllGather, 4096);
  spec.algorithm = Algorithm::kPat;
  spec.channels.reset();
  EXPECT_LT(time_of(tune_protocol(spec, kLinks), Protocol::kSimple), 0) << "8 ranks per server";
  spec.ranks_per_host = 1;
  const ProtocolChoice pat = tune_protocol(spec, kLinks);
  EXPECT_LT(time_of(pat, Protocol::kLl), 0);
  EXPECT_NEAR(time_of(pat, Protocol::kSimple), 8 + 4 * 4.0 + 16 * 2.8 + 16 * 4096 / (1000 * 42.5),
              1e-9);
  spec.collective = trace::CollectiveType::kAllReduce;
  EXPECT_LT(time_of(tune_protocol(spec, kLinks), Protocol::kSimple), 0) << "no PAT all-reduce";
}

// With one rank per server every step crosses the network, and NCCL charges the tree's network
// hop for it; a group's servers are the hosts its members occupy, not its size over
// ranks_per_host.
TEST(Tuner, OneRankPerServerChargesTheTreesNetworkHop) {
  CollectiveSpec spec = two_servers(trace::CollectiveType::kAllReduce, 4096);
  spec.ranks = {0, 8, 16, 24};
  const ProtocolChoice choice = tune_protocol(spec, kLinks);
  // 6.6 + 6 steps x 5.0; one NIC per server: LL's bus min(50 x 0.5, 39), algbw x 4 / 6.
  EXPECT_NEAR(time_of(choice, Protocol::kLl), 36.6 + 4096 / (1000 * 25.0 * 4 / 6), 1e-9);
}

}  // namespace
}  // namespace etwire::collectives

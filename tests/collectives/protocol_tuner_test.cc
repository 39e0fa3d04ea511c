// `collectives.protocol: auto`: the tuner's model picks LL for small collectives, LL128 in the
// middle and Simple for large ones, as NCCL's would on two 8-GPU servers with 8 NICs each; it
// weighs only what NCCL weighs (ring and tree), and its times follow the model's formula.
#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>

#include "collectives/protocol_tuner.h"

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
       {Algorithm::kHalvingDoubling, Algorithm::kNvls, Algorithm::kHierarchical}) {
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

}  // namespace
}  // namespace etwire::collectives

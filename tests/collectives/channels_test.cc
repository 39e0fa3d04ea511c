// Ring channels (CollectiveSpec::channels): the data split over C rings laid rail by rail, hops
// between hosts relayed onto the receiver's rail. Every member ends with the collective's result
// at any group size, hosts of any size (the last one short), chunking and QP split; with as many
// channels as ranks per host every network hop stays on one rail and every member (NIC) sends the
// same network bytes.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "collectives/generate.h"
#include "collectives/hosts.h"
#include "collectives/ring_layout.h"
#include "collectives/traffic_stats.h"
#include "collectives/verify.h"
#include "tests/collectives/test_groups.h"

namespace etwire::collectives {
namespace {

using trace::CollectiveType;

CollectiveSpec channel_spec(CollectiveType type, uint32_t n, uint32_t per_host, uint32_t channels,
                            uint64_t bytes) {
  CollectiveSpec spec;
  spec.collective = type;
  spec.algorithm = Algorithm::kRing;
  spec.ranks = testing::contiguous_group(n);
  spec.ranks_per_host = per_host;
  spec.channels = channels;
  spec.bytes = bytes;
  return spec;
}

TEST(RingChannels, EveryMemberEndsWithTheResult) {
  uint64_t seed = 1;
  for (CollectiveType type :
       {CollectiveType::kAllReduce, CollectiveType::kReduceScatter, CollectiveType::kAllGather}) {
    for (uint32_t n : {2u, 3u, 5u, 8u, 12u, 16u, 24u, 64u}) {
      for (uint32_t per_host : {1u, 2u, 3u, 4u, 8u}) {
        for (uint32_t channels : {1u, 2u, 3u, 8u}) {
          ++seed;
          const CollectiveSpec spec = channel_spec(type, n, per_host, channels, 29 * n + seed % 7);
          ASSERT_EQ(testing::verify_varied(spec, seed), "");
        }
      }
    }
  }
}

TEST(RingChannels, AsManyChannelsAsRailsKeepEveryHopOnARailAndLoadEveryNicAlike) {
  // Two servers of eight ranks: one channel per NIC.
  const CollectiveSpec spec = channel_spec(CollectiveType::kAllReduce, 16, 8, 8, 16 * 8 * 4096);
  ProgramGenerator generator(spec);
  const CollectiveProgram program = generator.generate();
  ASSERT_EQ(verify(generator.spec(), program), "");
  const HostGrouping hosts{8};
  for (const Flow& flow : flows(program)) {
    const int32_t src = spec.ranks[flow.src];
    const int32_t dst = spec.ranks[flow.dst];
    if (hosts.same_host(src, dst)) continue;
    EXPECT_EQ(hosts.local_index(src), hosts.local_index(dst))
        << "network hop " << src << " -> " << dst << " leaves its rail";
    EXPECT_EQ(flow.qp / generator.spec().qps, hosts.local_index(src))
        << "channel " << flow.qp << " on rail " << hosts.local_index(src);
  }
  const auto traffic = member_traffic(program, 8);
  const auto [low, high] = std::minmax_element(traffic.begin(), traffic.end(),
                                               [](const MemberTraffic& a, const MemberTraffic& b) {
                                                 return a.network_bytes_sent < b.network_bytes_sent;
                                               });
  EXPECT_GT(low->network_bytes_sent, 0u);
  EXPECT_EQ(low->network_bytes_sent, high->network_bytes_sent);
  // Each channel's ring crosses the two hosts twice per step: 2 x 2(n-1) steps of F / (8 n).
  uint64_t network = 0;
  for (const MemberTraffic& t : traffic) network += t.network_bytes_sent;
  EXPECT_EQ(network, 8u * 2 * 2 * 15 * (spec.bytes / (8 * 16)));
}

TEST(RingChannels, OneRingInGroupOrderLeavesTheHopsAsTheyWere) {
  // Without channels the ring is the group's order and the hop between hosts goes straight:
  // ranks 7 and 15 carry every network byte (the single-channel picture).
  CollectiveSpec spec = channel_spec(CollectiveType::kAllReduce, 16, 8, 1, 1 << 20);
  spec.channels.reset();
  const auto traffic = member_traffic(generate(spec), 8);
  for (uint32_t p = 0; p < 16; ++p) {
    EXPECT_EQ(traffic[p].network_bytes_sent > 0, p == 7 || p == 15) << p;
  }
}

TEST(RingChannels, LayoutRotatesEachHostAndRelaysThroughTheEntry) {
  CollectiveSpec spec = channel_spec(CollectiveType::kAllReduce, 8, 4, 4, 64);
  const RingLayout rings(resolve(spec));
  ASSERT_EQ(rings.pipelines(), 4u);
  // Channel 1: host 0 as 1 2 3 0, host 1 as 5 6 7 4; the hop 0 -> 5 relayed by 1 (rail 1).
  const uint32_t expected[] = {1, 2, 3, 0, 5, 6, 7, 4};
  for (uint32_t i = 0; i < 8; ++i) EXPECT_EQ(rings.member_at(1, i), expected[i]) << i;
  EXPECT_EQ(rings.relay_of_hop(1, 3), 1u);
  EXPECT_EQ(rings.hop_relayed_by(1, 1), 3u);
  EXPECT_EQ(rings.relay_of_hop(1, 7), 5u);
  EXPECT_EQ(rings.relay_of_hop(1, 0), RingLayout::kNone);
}

TEST(RingChannels, RefusedWhereNotBuilt) {
  CollectiveSpec spec = channel_spec(CollectiveType::kAllReduce, 8, 4, 65, 64);
  EXPECT_THROW(resolve(spec), SpecError);
  spec.channels = 2;
  spec.algorithm = Algorithm::kBidirectionalRing;
  try {
    resolve(spec);
    FAIL() << "bidirectional ring with channels accepted";
  } catch (const SpecError& e) {
    EXPECT_NE(std::string(e.what()).find("channels: built for the ring"), std::string::npos);
  }
  spec.algorithm = Algorithm::kRing;
  spec.collective = CollectiveType::kBroadcast;
  EXPECT_THROW(resolve(spec), SpecError);
  spec.collective = CollectiveType::kAllReduce;
  spec.channels = 64;
  spec.qps = 256;  // 64 x 256 QP ids fit exactly
  EXPECT_EQ(resolve(spec).channels(), 64u);
}

}  // namespace
}  // namespace etwire::collectives

namespace etwire::collectives {
namespace {

// Channel c of an NCCL-like graph over servers of `gpus`: enters on GPU c, walks down, leaves by
// NIC c (the last GPU hands the hop to GPU c).
std::shared_ptr<const config::RingGraph> descending_graph(uint32_t gpus, uint32_t channels) {
  auto graph = std::make_shared<config::RingGraph>();
  for (uint32_t c = 0; c < channels; ++c) {
    config::RingGraphChannel channel;
    for (uint32_t i = 0; i < gpus; ++i) channel.gpus.push_back((c + gpus - i) % gpus);
    channel.net_in = c;
    channel.net_out = c;
    graph->channels.push_back(channel);
  }
  return graph;
}

TEST(RingGraph, ChannelsFollowTheGraphsOrderAndLeaveByItsNic) {
  CollectiveSpec spec = channel_spec(CollectiveType::kAllReduce, 16, 8, 4, 16 * 4 * 4096);
  spec.ring_graph = descending_graph(8, 4);
  ProgramGenerator generator(spec);
  const RingLayout rings(generator.spec());
  ASSERT_EQ(rings.pipelines(), 4u);
  // Channel 2: host 0 as 2 1 0 7 6 5 4 3, host 1 likewise; the hop 3 -> 10 relayed by 2.
  const uint32_t expected[] = {2, 1, 0, 7, 6, 5, 4, 3, 10, 9, 8, 15, 14, 13, 12, 11};
  for (uint32_t i = 0; i < 16; ++i) EXPECT_EQ(rings.member_at(2, i), expected[i]) << i;
  EXPECT_EQ(rings.relay_of_hop(2, 7), 2u);
  EXPECT_EQ(rings.relay_of_hop(2, 15), 10u);
  const CollectiveProgram program = generator.generate();
  ASSERT_EQ(verify(generator.spec(), program), "");
  // Four channels on NICs 0-3: those carry the network bytes, alike; NICs 4-7 none.
  const auto traffic = member_traffic(program, 8);
  for (uint32_t p = 0; p < 16; ++p) {
    EXPECT_EQ(traffic[p].network_bytes_sent > 0, p % 8 < 4) << "member " << p;
    EXPECT_EQ(traffic[p].network_bytes_sent, traffic[p % 8 < 4 ? 0 : 4].network_bytes_sent);
  }
}

TEST(RingGraph, EveryMemberEndsWithTheResultOnShortAndSparseHosts) {
  uint64_t seed = 11;
  for (CollectiveType type :
       {CollectiveType::kAllReduce, CollectiveType::kReduceScatter, CollectiveType::kAllGather}) {
    for (uint32_t n : {2u, 5u, 8u, 13u, 16u, 40u}) {
      for (uint32_t channels : {1u, 3u, 4u, 6u}) {
        ++seed;
        CollectiveSpec spec = channel_spec(type, n, 8, channels, 29 * n + seed % 7);
        spec.ring_graph = descending_graph(8, 4);
        ASSERT_EQ(testing::verify_varied(spec, seed), "");
      }
    }
  }
}

TEST(RingGraph, AGraphOfOtherServersIsRefused) {
  CollectiveSpec spec = channel_spec(CollectiveType::kAllReduce, 16, 4, 4, 1024);
  spec.ring_graph = descending_graph(8, 4);
  try {
    resolve(spec);
    FAIL() << "a graph of 8-GPU servers accepted on hosts of 4";
  } catch (const SpecError& e) {
    EXPECT_NE(std::string(e.what()).find("hosts hold 4 ranks"), std::string::npos) << e.what();
  }
  spec = channel_spec(CollectiveType::kAllReduce, 16, 8, 4, 1024);
  spec.ring_graph = descending_graph(8, 4);
  spec.algorithm = Algorithm::kBidirectionalRing;
  spec.channels.reset();
  EXPECT_THROW(resolve(spec), SpecError);
}

}  // namespace
}  // namespace etwire::collectives

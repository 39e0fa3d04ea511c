// `etwire collective` as a lab engineer runs it.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "tests/testing/test_paths.h"

namespace etwire {
namespace {

using ::testing::HasSubstr;

etwire::testing::CommandResult etwire(const std::string& args) {
  return etwire::testing::run_etwire(args);
}

TEST(CollectiveCli, JsonReportsStepsFlowsBytesAndFactor) {
  auto r = etwire("collective all_reduce --ranks 4 --bytes 4KiB --chunks 2 --qps 2 --json");
  ASSERT_EQ(r.code, 0) << r.output;
  auto j = nlohmann::json::parse(r.output);
  EXPECT_EQ(j["collective"], "ALL_REDUCE");
  EXPECT_EQ(j["algorithm"], "ring");
  EXPECT_EQ(j["full_bytes"], 4096);
  EXPECT_DOUBLE_EQ(j["busbw_factor"].get<double>(), 1.5);
  ASSERT_EQ(j["members"].size(), 4u);
  for (const auto& m : j["members"]) {
    EXPECT_EQ(m["bytes_sent"], 6144);              // 2(n-1)/n x 4 KiB
    EXPECT_EQ(m["steps"].size(), 6u * 2 * 2 * 2);  // steps x chunks x QPs x (send + recv)
  }
  uint64_t flow_bytes = 0;
  for (const auto& f : j["flows"]) flow_bytes += f["bytes"].get<uint64_t>();
  EXPECT_EQ(flow_bytes, 4u * 6144);
}

// Hosts of several ranks run a channel per rank of a host by default (a NIC per GPU, as a run
// has one per NIC of a server): every rank sends network bytes alike. --channels 0 keeps one ring
// in group order, whose network bytes leave each host from its last rank only.
TEST(CollectiveCli, HostsOfSeveralRanksRunAChannelPerRankOfAHost) {
  auto network_bytes = [](const std::string& extra) {
    auto r = etwire("collective all_reduce -n 16 -H 8 -b 1MiB --json" + extra);
    EXPECT_EQ(r.code, 0) << r.output;
    const auto j = nlohmann::json::parse(r.output);
    std::vector<uint64_t> sent;
    for (const auto& m : j["members"]) sent.push_back(m["network_bytes_sent"].get<uint64_t>());
    return std::make_pair(j["channels"].get<uint32_t>(), sent);
  };
  const auto [channels, spread] = network_bytes("");
  EXPECT_EQ(channels, 8u);
  ASSERT_EQ(spread.size(), 16u);
  for (uint64_t bytes : spread) EXPECT_EQ(bytes, spread[0]);
  EXPECT_GT(spread[0], 0u);
  const auto [one, ring] = network_bytes(" --channels 0");
  EXPECT_EQ(one, 1u);
  for (size_t r = 0; r < ring.size(); ++r) {
    EXPECT_EQ(ring[r] > 0, r == 7 || r == 15) << "rank " << r;
  }
}

TEST(CollectiveCli, TextShowsTheProgramAndVerifies) {
  auto r = etwire(
      "collective all_to_all --group 5,1,9,12 --bytes 1000 --algo pxn --ranks-per-host 2 "
      "--verify");
  ASSERT_EQ(r.code, 0) << r.output;
  EXPECT_THAT(r.output, HasSubstr("ALL_TO_ALL over 4 ranks"));
  EXPECT_THAT(r.output, HasSubstr("busbw factor 0.7500 = (n-1)/n"));
  EXPECT_THAT(r.output, HasSubstr("verified: every rank ends with the ALL_TO_ALL result"));
  EXPECT_THAT(r.output, HasSubstr("Bytes on the wire per rank"));
  EXPECT_THAT(r.output, HasSubstr("Steps of rank 12"));
  EXPECT_THAT(r.output, HasSubstr("network"));
}

TEST(CollectiveCli, EveryCollectiveRuns) {
  for (const char* type :
       {"all_reduce", "reduce_scatter", "reduce_scatter_block", "all_gather", "all_to_all",
        "broadcast", "reduce", "gather", "scatter", "barrier", "send_recv"}) {
    auto r = etwire(std::string("collective ") + type + " -n " +
                    (std::string(type) == "send_recv" ? "2" : "5") +
                    " -b 777 --chunk-size 100 --summary --verify");
    EXPECT_EQ(r.code, 0) << type << ": " << r.output;
  }
  auto v = etwire(
      "collective all_to_all_v -n 3 --peer-bytes 1,2,3,4,5,6,7,8,9 --verify --json "
      "--summary");
  ASSERT_EQ(v.code, 0) << v.output;
  EXPECT_EQ(nlohmann::json::parse(v.output)["members"][0]["bytes_sent"], 5);
}

TEST(CollectiveCli, CollNetShowsItsAggregationNode) {
  // Two hosts of four: each member sends its quarter up to the one switch and takes the sum back.
  auto r = etwire(
      "collective all_reduce -n 8 -b 4KiB --algo collnet --ranks-per-host 4 --verify --json");
  ASSERT_EQ(r.code, 0) << r.output;
  auto j = nlohmann::json::parse(r.output);
  EXPECT_EQ(j["aggregation_nodes"], 1);
  ASSERT_EQ(j["members"].size(), 9u);
  for (int m = 0; m < 8; ++m) EXPECT_EQ(j["members"][m]["network_bytes_sent"], 1024) << m;
  EXPECT_EQ(j["members"][8]["rank"], "agg0");
  EXPECT_EQ(j["members"][8]["network_bytes_sent"], 8 * 1024);
  int to_switch = 0;
  for (const auto& f : j["flows"]) to_switch += f["dst"] == "agg0" ? 1 : 0;
  EXPECT_EQ(to_switch, 8);
  auto text = etwire("collective all_reduce -n 8 -b 4KiB --algo collnet --ranks-per-host 4");
  ASSERT_EQ(text.code, 0) << text.output;
  EXPECT_THAT(text.output, HasSubstr("1 aggregation node (agg0..)"));
  EXPECT_THAT(text.output, HasSubstr("Steps of aggregation node agg0"));
  // --rank shows that rank only.
  auto one = etwire(
      "collective all_reduce -n 8 -b 4KiB --algo collnet --ranks-per-host 4 --rank 3 "
      "--json --summary");
  ASSERT_EQ(one.code, 0) << one.output;
  EXPECT_EQ(nlohmann::json::parse(one.output)["members"].size(), 1u);
}

TEST(CollectiveCli, RankFilterAndRoot) {
  auto r = etwire("collective broadcast -n 4 -b 1KiB --root 2 --rank 2 --json");
  ASSERT_EQ(r.code, 0) << r.output;
  auto j = nlohmann::json::parse(r.output);
  EXPECT_EQ(j["root"], 2);
  ASSERT_EQ(j["members"].size(), 1u);
  EXPECT_EQ(j["members"][0]["rank"], 2);
  EXPECT_EQ(j["members"][0]["bytes_sent"], 1024);
}

TEST(CollectiveCli, BadInputExitsTwoWithAClearMessage) {
  auto r = etwire("collective all_sum -n 4 -b 1KiB");
  EXPECT_EQ(r.code, 2);
  EXPECT_THAT(r.output, HasSubstr("unknown collective \"all_sum\""));
  r = etwire("collective all_reduce -n 4 -b 1KiB --algo butterfly");
  EXPECT_EQ(r.code, 2);
  EXPECT_THAT(r.output, HasSubstr("unknown algorithm \"butterfly\""));
  r = etwire("collective all_reduce -n 4 -b 1KiB --algo auto");
  EXPECT_EQ(r.code, 2);
  EXPECT_THAT(r.output, HasSubstr("--algo: auto is the tuner's pick for a run's links"));
  r = etwire("collective all_reduce -n 4 -b 1KiB --algo pxn");
  EXPECT_EQ(r.code, 2);
  EXPECT_THAT(r.output, HasSubstr("pxn does not apply to ALL_REDUCE"));
  r = etwire("collective all_reduce -n 4 -b 12XB");
  EXPECT_EQ(r.code, 2);
  EXPECT_THAT(r.output, HasSubstr("--bytes: \"12XB\" is not a byte size"));
  r = etwire("collective all_reduce -n 4");
  EXPECT_EQ(r.code, 2);
  EXPECT_THAT(r.output, HasSubstr("--bytes"));
  r = etwire("collective broadcast -n 4 -b 1KiB --root 9");
  EXPECT_EQ(r.code, 2);
  EXPECT_THAT(r.output, HasSubstr("root: rank 9 is not in the process group"));
  EXPECT_EQ(etwire("collective all_reduce -n 4 -b 1KiB --chunks 2 --chunk-size 1K").code, 2);
  EXPECT_EQ(etwire("collective all_reduce -n 0 -b 1KiB").code, 2);
  EXPECT_EQ(etwire("collective all_reduce -n 4 -b 1KiB --qps 0").code, 2);
  EXPECT_EQ(etwire("collective all_to_all_v -n 3").code, 2);
  r = etwire("collective all_reduce --group 1,x -b 1KiB");
  EXPECT_EQ(r.code, 2);
  EXPECT_THAT(r.output, HasSubstr("--group: \"x\" is not a rank"));
}

}  // namespace
}  // namespace etwire

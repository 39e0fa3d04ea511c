// `etwire validate` and `etwire plan` as a user runs them: exit codes, messages, JSON.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "tests/testing/test_paths.h"

namespace etwire {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

// From the source tree, so the shipped configs' relative trace paths resolve.
testing::CommandResult etwire(const std::string& args) {
  return testing::run_etwire(args, testing::source_dir());
}

// stdout only (stderr dropped), for JSON.
testing::CommandResult etwire_stdout(const std::string& args) {
  return testing::run_etwire(args, testing::source_dir(), testing::Capture::kStdoutOnly);
}

TEST(ValidateCommand, ShippedConfigsPass) {
  for (const char* name :
       {"loopback-demo.yaml", "twin-congestion.yaml", "dpdk-lab.yaml", "dpdk-ring.yaml",
        "verbs-lab.yaml", "verbs-software.yaml", "case-study-moe-mix.yaml",
        "case-study-load-balancing.yaml", "three-tier-rails.yaml"}) {
    auto r = etwire(std::string("validate configs/") + name);
    EXPECT_EQ(r.code, 0) << r.output;
    EXPECT_THAT(r.output, HasSubstr(std::string("OK configs/") + name + ": "));
  }
  auto demo = etwire("validate configs/loopback-demo.yaml");
  EXPECT_THAT(demo.output, HasSubstr("1 job (allreduce: 8 ranks x 4 iterations), 8 loopback "
                                     "ports at 100 Gb/s, PMTU 4096 (auto)"));
}

TEST(ValidateCommand, BrokenConfigExitsTwoWithLocations) {
  auto r = etwire("validate tests/control/configs/wrong-type-mtu.yaml");
  EXPECT_EQ(r.code, 2);
  EXPECT_THAT(r.output, HasSubstr("tests/control/configs/wrong-type-mtu.yaml:7:10: ports[0].mtu: "
                                  "expected an integer from 576 to 9216, got \"big\""));
  EXPECT_THAT(r.output, HasSubstr("invalid: 1 error, 0 warnings"));
}

TEST(ValidateCommand, OverridesAreCheckedLikeTheFile) {
  EXPECT_EQ(etwire("validate configs/loopback-demo.yaml --set transport.pmtu=1024 "
                   "-s ports[0].speed=400Gbps")
                .code,
            0);
  auto r = etwire("validate configs/loopback-demo.yaml --set transport.dcqcn.min_rat=1Mbps");
  EXPECT_EQ(r.code, 2);
  EXPECT_THAT(r.output, HasSubstr("--set transport.dcqcn.min_rat=1Mbps: transport.dcqcn.min_rat: "
                                  "unknown key \"min_rat\" in transport.dcqcn (did you mean "
                                  "\"min_rate\"?)"));
}

TEST(ValidateCommand, MissingFileAndBadArgumentsExitTwo) {
  auto r = etwire("validate configs/nope.yaml");
  EXPECT_EQ(r.code, 2);
  EXPECT_THAT(r.output, HasSubstr("configs/nope.yaml: no such file"));
  EXPECT_EQ(etwire("validate").code, 2);
  EXPECT_EQ(etwire("validate configs/loopback-demo.yaml --bogus").code, 2);
}

TEST(ValidateCommand, NoTracesSkipsTraceChecks) {
  EXPECT_EQ(
      etwire("validate configs/loopback-demo.yaml --set workload.jobs[0].trace=/no/such").code, 2);
  EXPECT_EQ(etwire("validate --no-traces configs/loopback-demo.yaml --set "
                   "workload.jobs[0].trace=/no/such")
                .code,
            0);
}

TEST(PlanCommand, TablesNameEveryRankAndPort) {
  auto r = etwire("plan configs/loopback-demo.yaml");
  ASSERT_EQ(r.code, 0) << r.output;
  EXPECT_THAT(r.output, HasSubstr("10.0.7.1"));
  EXPECT_THAT(r.output, HasSubstr("02:00:0a:00:07:01"));
  EXPECT_THAT(r.output, HasSubstr("Busiest port: host0: sends 7 MiB, receives 7 MiB per "
                                  "iteration"));
}

// A verbs plan says which RNIC serves the run and who will hold its per-QP rate limits.
TEST(PlanCommand, VerbsPlansSayHowRateLimitsAreHeld) {
  auto r = etwire("plan configs/verbs-lab.yaml --set ports[0].verbs.rate_limit=25Gbps");
  ASSERT_EQ(r.code, 0) << r.output;
  EXPECT_THAT(r.output, HasSubstr("Verbs: the machine's RDMA devices (libibverbs); messages "
                                  "posted as work requests of at most 1 MiB, 128 outstanding per "
                                  "QP, receives posted ahead"));
  EXPECT_THAT(r.output, HasSubstr("Per-QP rate limit 25 Gb/s on rail0 .. rail7 (8 ports): by the "
                                  "RNIC's per-QP limiter where the device has one, else by paced "
                                  "posting"));
  auto soft = etwire("plan configs/verbs-software.yaml");
  ASSERT_EQ(soft.code, 0) << soft.output;
  EXPECT_THAT(soft.output, HasSubstr("Verbs: the software RNIC over the fabric twin"));
  EXPECT_THAT(soft.output, Not(HasSubstr("rate limit")));
}

TEST(PlanCommand, JsonParses) {
  auto r = etwire_stdout("plan configs/dpdk-lab.yaml --json");
  ASSERT_EQ(r.code, 0) << r.output;
  auto j = nlohmann::json::parse(r.output);
  EXPECT_EQ(j["jobs"][0]["world_size"], 8);
  EXPECT_EQ(j["jobs"][0]["ranks"][5]["ipv4"], "192.168.11.2");
  EXPECT_EQ(j["ports"].size(), 2u);
  EXPECT_EQ(j["busiest_port"]["bytes_sent"], 4 * 7 * (1 << 20));
}

// Rank i of each server on NIC i (placement rail), and the paths that follow on a rail-optimized
// three-tier twin. One ring in group order (channels: 0) leaves each server from NIC 3 and arrives
// on NIC 0 of the next (3 switches across rails within a pod, 5 across pods); ranks on NICs the
// ring does not use send nothing over the network. By default (a channel per NIC) every rank
// sends, each channel's ring crossing both pods on its own rail.
TEST(PlanCommand, ShowsRailPlacementAndThreeTierPaths) {
  auto r = etwire_stdout("plan configs/three-tier-rails.yaml --json --set collectives.channels=0");
  ASSERT_EQ(r.code, 0) << r.output;
  const auto j = nlohmann::json::parse(r.output);
  const auto& ranks = j["jobs"][0]["ranks"];
  ASSERT_EQ(ranks.size(), 16u);
  EXPECT_EQ(ranks[5]["port"], "n9");       // host 1, local rank 1: server 1, NIC 1
  EXPECT_EQ(ranks[12]["port"], "n24");     // host 3, local rank 0: server 3, NIC 0
  EXPECT_EQ(ranks[3]["max_switches"], 3);  // n3 -> n8: rails 3 and 0 of pod 0
  EXPECT_EQ(ranks[7]["max_switches"], 5);  // n11 -> n16: pod 0 to pod 1
  EXPECT_EQ(ranks[1]["max_switches"], 0);  // scale-up only
  auto channels = etwire_stdout("plan configs/three-tier-rails.yaml --json");
  ASSERT_EQ(channels.code, 0) << channels.output;
  const auto by_channel = nlohmann::json::parse(channels.output);
  for (const auto& rank : by_channel["jobs"][0]["ranks"]) {
    EXPECT_EQ(rank["max_switches"], 5) << rank.dump();
  }
}

TEST(PlanCommand, RefusesAnInvalidConfig) {
  auto r = etwire("plan configs/loopback-demo.yaml --set mapping.jobs[0].ranks_per_port=0");
  EXPECT_EQ(r.code, 2);
  EXPECT_THAT(r.output, HasSubstr("no plan"));
}

TEST(Help, ListsValidateAndPlan) {
  auto r = etwire("--help");
  EXPECT_THAT(r.output, HasSubstr("validate"));
  EXPECT_THAT(r.output, HasSubstr("plan"));
}

}  // namespace
}  // namespace etwire

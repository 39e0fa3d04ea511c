// `inspect` on the real upstream traces, checked against facts stated in their MANIFEST and
// against an independent minimal decoder.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <map>

#include "tests/inspect/minimal_decoder.h"
#include "tests/testing/test_paths.h"
#include "trace/inspect/trace_summary.h"
#include "trace/trace_error.h"

namespace etwire::inspect {
namespace {

namespace fs = std::filesystem;
using trace::CollectiveType;
using trace::NodeType;

constexpr uint64_t kMiB = 1 << 20;

TraceSummary summarize_upstream(const std::string& prefix, const std::string& groups = "") {
  auto dir = etwire::testing::upstream_traces();
  auto set = trace::TraceSet::discover((dir / prefix).string());
  if (!groups.empty()) set.set_comm_groups(trace::CommGroups::load((dir / groups).string()));
  return summarize(set);
}

uint64_t colls(const RankSummary& r, CollectiveType t) {
  return r.collectives[static_cast<size_t>(t)].count;
}
uint64_t coll_bytes(const RankSummary& r, CollectiveType t) {
  return r.collectives[static_cast<size_t>(t)].bytes;
}
uint64_t nodes(const RankSummary& r, NodeType t) {
  return r.nodes_by_type[static_cast<size_t>(t)];
}

struct Microbench {
  std::string name;
  CollectiveType type;
};

class UpstreamMicrobench : public ::testing::TestWithParam<std::tuple<Microbench, int>> {};

// MANIFEST: "single <TYPE> of 1 MiB (1048576 B) on all ranks, no pg_name".
TEST_P(UpstreamMicrobench, OneCollectiveOfOneMiBPerRank) {
  ETWIRE_REQUIRE_UPSTREAM_TRACES();
  auto [bench, ranks] = GetParam();
  auto summary = summarize_upstream("astra-sim/microbench_" + bench.name + "_" +
                                    std::to_string(ranks) + "npus_1MB/" + bench.name);
  ASSERT_EQ(summary.world_size, ranks);
  for (const auto& r : summary.ranks) {
    SCOPED_TRACE("rank " + std::to_string(r.rank));
    EXPECT_EQ(nodes(r, NodeType::kCommColl), 1u);
    EXPECT_EQ(colls(r, bench.type), 1u);
    EXPECT_EQ(coll_bytes(r, bench.type), kMiB);
    EXPECT_EQ(r.traffic_comm_nodes, 1u);
    EXPECT_EQ(r.depth, 1u);
    ASSERT_EQ(r.pg_names.size(), 1u);
    EXPECT_EQ(r.pg_names.begin()->first, "");  // no pg_name
  }
  ASSERT_EQ(summary.groups.size(), 1u);
  EXPECT_EQ(summary.groups[0].id, trace::kAllRanksGroup);  // implicit: no pg_name
  EXPECT_FALSE(summary.groups[0].from_file());
  EXPECT_EQ(summary.groups[0].members.size(), static_cast<size_t>(ranks));
  EXPECT_TRUE(summary.groups[0].consistent());
}

INSTANTIATE_TEST_SUITE_P(
    AllSizes, UpstreamMicrobench,
    ::testing::Combine(::testing::Values(Microbench{"all_reduce", CollectiveType::kAllReduce},
                                         Microbench{"all_gather", CollectiveType::kAllGather},
                                         Microbench{"reduce_scatter",
                                                    CollectiveType::kReduceScatter},
                                         Microbench{"all_to_all", CollectiveType::kAllToAll}),
                       ::testing::Values(4, 8, 16)),
    [](const auto& info) {
      return std::get<0>(info.param).name + "_" + std::to_string(std::get<1>(info.param));
    });

// MANIFEST: 4x4 torus; 1 MiB ALL_REDUCE on the row group, a 100 us COMP, then 1 MiB ALL_REDUCE on
// the column group; 8 groups of 4.
TEST(UpstreamInspect, T2DTorusRowsAndColumns) {
  ETWIRE_REQUIRE_UPSTREAM_TRACES();
  auto summary = summarize_upstream("astra-sim-artifacts/T2D-analytical/trace",
                                    "astra-sim-artifacts/T2D-analytical/comm_group.json");
  ASSERT_EQ(summary.world_size, 16);
  for (const auto& r : summary.ranks) {
    EXPECT_EQ(colls(r, CollectiveType::kAllReduce), 2u);
    EXPECT_EQ(coll_bytes(r, CollectiveType::kAllReduce), 2 * kMiB);
    EXPECT_EQ(nodes(r, NodeType::kComp), 1u);
    EXPECT_EQ(r.compute_us, 100u);
    EXPECT_EQ(r.depth, 3u);  // row all-reduce -> compute -> column all-reduce
  }
  ASSERT_EQ(summary.groups.size(), 8u);
  for (const auto& g : summary.groups) {
    EXPECT_EQ(g.members.size(), 4u);
    EXPECT_TRUE(g.consistent());
    for (int32_t m : g.members) EXPECT_EQ(g.per_member.at(m).count, 1u);
  }
  // Row groups are named with float text ("0.0".."3.0"), column groups plainly ("4".."7"). The
  // first row is the file's group 0, not the all-ranks group.
  EXPECT_EQ(summary.groups[0].id, 0);
  EXPECT_TRUE(summary.groups[0].from_file());
  EXPECT_EQ(summary.groups[0].pg_names, std::vector<std::string>{"0.0"});
  EXPECT_EQ(summary.groups[0].members, (std::vector<int32_t>{0, 1, 2, 3}));
  EXPECT_EQ(summary.groups[4].pg_names, std::vector<std::string>{"4"});
  EXPECT_EQ(summary.groups[4].members, (std::vector<int32_t>{0, 4, 8, 12}));
}

// MANIFEST: per job a single ALL_REDUCE of 500 MiB (524288000 B), pg_name "0".
TEST(UpstreamInspect, MultitenantJobsCarry500MiB) {
  ETWIRE_REQUIRE_UPSTREAM_TRACES();
  for (const char* job : {"J0", "J1"}) {
    auto summary =
        summarize_upstream(std::string("astra-sim-artifacts/multitenant-T1D-") + job + "/trace");
    ASSERT_EQ(summary.world_size, 4);
    for (const auto& r : summary.ranks) {
      EXPECT_EQ(coll_bytes(r, CollectiveType::kAllReduce), 524288000u);
      EXPECT_EQ(r.pg_names.count("0"), 1u);
    }
  }
}

// MANIFEST: a ring all-reduce written as chains of SEND/RECV carrying 1 MiB / 8 each.
TEST(UpstreamInspect, CustomRingIsPointToPoint) {
  ETWIRE_REQUIRE_UPSTREAM_TRACES();
  auto summary = summarize_upstream("astra-sim/custom_ring_allreduce_8npus_1MB/custom_allreduce");
  ASSERT_EQ(summary.world_size, 8);
  for (const auto& r : summary.ranks) {
    EXPECT_GT(r.sends.count, 0u);
    EXPECT_EQ(r.sends.count, r.recvs.count);
    EXPECT_EQ(r.sends.bytes, r.sends.count * (kMiB / 8));
    // The converter also writes comm_type on p2p nodes; those must not count as collectives.
    EXPECT_EQ(nodes(r, NodeType::kCommColl), 0u);
    for (const auto& c : r.collectives) EXPECT_EQ(c.count, 0u);
  }
}

// MANIFEST: real PyTorch trace, rank 0 only; CPU-side c10d comm nodes carry no comm attrs.
TEST(UpstreamInspect, PytorchTraceHasBookkeepingCommNodes) {
  ETWIRE_REQUIRE_UPSTREAM_TRACES();
  auto summary = summarize_upstream("chakra/feeder_tests_trace_pytorch_1rank/chakra");
  ASSERT_EQ(summary.world_size, 1);
  const auto& r = summary.ranks[0];
  EXPECT_GT(r.bookkeeping_comm_nodes, 0u);
  EXPECT_GT(colls(r, CollectiveType::kAllReduce), 0u);
  EXPECT_GT(colls(r, CollectiveType::kBroadcast), 0u);
  EXPECT_GT(r.depth, 1u);
}

// The trace sets of the collection, with the comm-group file each needs.
std::vector<std::pair<std::string, std::string>> all_upstream_sets() {
  std::vector<std::pair<std::string, std::string>> sets;
  auto root = etwire::testing::upstream_traces();
  std::map<std::string, std::string> groups = {
      {"astra-sim-artifacts/T1D-analytical/trace", "comm_group.json"},
      {"astra-sim-artifacts/T1D-ns3/trace", "comm_group.json"},
      {"astra-sim-artifacts/T2D-analytical/trace", "comm_group.json"},
      {"astra-sim-artifacts/T2D-ns3/trace", "comm_group.json"},
      {"astra-sim-artifacts/stg_denseA_4npus/denseA", "denseA.json"},
      {"astra-sim-artifacts/stg_denseB_4npus/denseB", "denseB.json"},
      {"astra-sim-hybrid-parallelism/pytorch_fsdp_2ranks/chakra_trace", "comm_group.test-2.json"},
  };
  for (const auto& entry : fs::recursive_directory_iterator(root)) {
    std::string name = entry.path().filename().string();
    const std::string suffix = ".0.et";
    if (name.size() <= suffix.size() || name.substr(name.size() - suffix.size()) != suffix) {
      continue;
    }
    std::string prefix = fs::relative(entry.path().parent_path(), root).string() + "/" +
                         name.substr(0, name.size() - suffix.size());
    auto it = groups.find(prefix);
    std::string group_file =
        it == groups.end() ? "" : fs::path(prefix).parent_path().string() + "/" + it->second;
    sets.emplace_back(prefix, group_file);
  }
  return sets;
}

TEST(UpstreamInspect, EverySetLoadsAndMatchesTheMinimalDecoder) {
  ETWIRE_REQUIRE_UPSTREAM_TRACES();
  auto sets = all_upstream_sets();
  EXPECT_GE(sets.size(), 24u);
  uint64_t files = 0;
  for (const auto& [prefix, groups] : sets) {
    SCOPED_TRACE(prefix);
    TraceSummary summary;
    ASSERT_NO_THROW(summary = summarize_upstream(prefix, groups));
    for (const auto& r : summary.ranks) {
      ++files;
      auto expected = etwire::testing::MinimalDecoder::count_file(r.file);
      EXPECT_EQ(r.nodes, expected.nodes) << r.file;
      for (size_t t = 0; t < expected.by_type.size(); ++t) {
        EXPECT_EQ(r.nodes_by_type[t], expected.by_type[t]) << r.file << " type " << t;
      }
      for (size_t c = 0; c < expected.colls.size(); ++c) {
        EXPECT_EQ(r.collectives[c].count, expected.colls[c]) << r.file << " comm_type " << c;
        EXPECT_EQ(r.collectives[c].bytes, expected.coll_bytes[c]) << r.file;
      }
      EXPECT_EQ(r.sends.bytes, expected.send_bytes) << r.file;
      EXPECT_EQ(r.recvs.bytes, expected.recv_bytes) << r.file;
      EXPECT_EQ(r.compute_us, expected.comp_us) << r.file;
      EXPECT_EQ(r.feeder.nodes_issued, r.nodes) << r.file;
    }
    for (const auto& g : summary.groups) EXPECT_TRUE(g.consistent()) << "group " << g.id;
  }
  // Every .et file of the collection belongs to one of the sets read.
  uint64_t on_disk = 0;
  for (const auto& entry : fs::recursive_directory_iterator(etwire::testing::upstream_traces())) {
    on_disk += entry.path().extension() == ".et" ? 1 : 0;
  }
  EXPECT_EQ(files, on_disk);
}

TEST(UpstreamInspect, StgGroupsNeedTheirCommGroupFile) {
  ETWIRE_REQUIRE_UPSTREAM_TRACES();
  try {
    summarize_upstream("astra-sim-artifacts/stg_denseA_4npus/denseA");
    FAIL() << "expected an error for pg_name without a comm-group file";
  } catch (const trace::TraceError& e) {
    EXPECT_THAT(e.what(), ::testing::HasSubstr("denseA.0.et: record"));
    EXPECT_THAT(e.what(), ::testing::HasSubstr("no comm-group file was given"));
  }
}

}  // namespace
}  // namespace etwire::inspect

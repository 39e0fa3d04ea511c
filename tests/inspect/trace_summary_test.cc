#include "trace/inspect/trace_summary.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>

#include "tests/testing/test_paths.h"
#include "trace/synth/synth.h"
#include "trace/trace_error.h"

namespace etwire::inspect {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using trace::CollectiveType;

TEST(TraceSummary, CountsMicrobenchAndRendersText) {
  auto dir = etwire::testing::make_scratch_dir("summary");
  synth::MicrobenchSpec spec;
  spec.collective.reset();  // send/recv ring
  spec.ranks = 3;
  spec.iterations = 2;
  spec.bytes = 4096;
  spec.compute_us = 5;
  synth::write_microbench(spec, (dir / "p").string());
  auto summary = summarize(trace::TraceSet::discover((dir / "p").string()));
  ASSERT_EQ(summary.ranks.size(), 3u);
  for (const auto& r : summary.ranks) {
    EXPECT_EQ(r.nodes, 6u);
    EXPECT_EQ(r.sends.count, 2u);
    EXPECT_EQ(r.recvs.bytes, 8192u);
    EXPECT_EQ(r.compute_us, 10u);
    EXPECT_EQ(r.depth, 4u);  // compute, send|recv, compute, send|recv
  }
  EXPECT_TRUE(summary.groups.empty());  // no collectives
  std::string text = to_text(summary);
  EXPECT_THAT(text, HasSubstr("3 ranks"));
  EXPECT_THAT(text, HasSubstr("SEND"));
  EXPECT_THAT(text, HasSubstr("(no collectives)"));
}

TEST(TraceSummary, MembersIssuingDifferentCollectiveCountsAreFlagged) {
  auto dir = etwire::testing::make_scratch_dir("summary");
  synth::MicrobenchSpec spec;
  spec.ranks = 2;
  spec.iterations = 3;
  synth::write_microbench(spec, (dir / "a").string());
  spec.iterations = 2;
  synth::write_microbench(spec, (dir / "b").string());
  fs::copy_file(dir / "b.1.et", dir / "a.1.et", fs::copy_options::overwrite_existing);
  auto summary = summarize(trace::TraceSet::discover((dir / "a").string()));
  ASSERT_EQ(summary.groups.size(), 1u);
  EXPECT_FALSE(summary.groups[0].consistent());
  EXPECT_EQ(summary.groups[0].per_member.at(0).count, 3u);
  EXPECT_EQ(summary.groups[0].per_member.at(1).count, 2u);
  EXPECT_THAT(to_text(summary), HasSubstr("NO"));
  EXPECT_EQ(to_json(summary)["process_groups"][0]["consistent"], false);
}

TEST(TraceSummary, CollectiveOnAGroupWithoutTheRankIsAnError) {
  auto dir = etwire::testing::make_scratch_dir("summary");
  synth::MicrobenchSpec spec;
  spec.ranks = 3;
  spec.pg_name = "1";
  synth::write_microbench(spec, (dir / "g").string());
  auto set = trace::TraceSet::discover((dir / "g").string());
  set.set_comm_groups(trace::CommGroups::from_json_text(R"({"1": [0, 1]})", "groups.json"));
  try {
    summarize(set);
    FAIL() << "rank 2 is not in group 1";
  } catch (const trace::TraceError& e) {
    EXPECT_THAT(e.what(), HasSubstr("g.2.et: record 1 (node id 1)"));
    EXPECT_THAT(e.what(), HasSubstr("rank 2 issues a collective on process group 1"));
  }
}

TEST(TraceSummary, JsonCarriesEveryRankField) {
  auto dir = etwire::testing::make_scratch_dir("summary");
  synth::MicrobenchSpec spec;
  spec.collective = CollectiveType::kAllToAll;
  spec.ranks = 2;
  spec.bytes = 1000;
  synth::write_microbench(spec, (dir / "j").string());
  auto j = to_json(summarize(trace::TraceSet::discover((dir / "j").string())));
  EXPECT_EQ(j["world_size"], 2);
  EXPECT_TRUE(j["comm_groups"].is_null());
  const auto& r = j["ranks"][1];
  EXPECT_EQ(r["rank"], 1);
  EXPECT_EQ(r["nodes_by_type"]["COMM_COLL_NODE"], 1);
  EXPECT_EQ(r["bytes_by_type"]["COMM_COLL_NODE"], 1000);
  EXPECT_EQ(r["collectives"]["ALL_TO_ALL"]["bytes"], 1000);
  EXPECT_EQ(r["pg_names"][""]["count"], 1);
  EXPECT_EQ(r["depth"], 1);
}

}  // namespace
}  // namespace etwire::inspect

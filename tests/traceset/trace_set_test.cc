#include "trace/trace_set.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>

#include "tests/testing/test_paths.h"
#include "trace/trace_error.h"

namespace etwire::trace {
namespace {

using ::testing::HasSubstr;
namespace fs = std::filesystem;

void touch(const fs::path& path) {
  std::ofstream(path) << "";
}

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const TraceError& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(TraceSetDiscover, FindsRankFilesByPrefixInRankOrder) {
  auto dir = etwire::testing::make_scratch_dir("set");
  for (int r : {2, 0, 10, 1, 3, 4, 5, 6, 7, 8, 9}) touch(dir / ("w." + std::to_string(r) + ".et"));
  touch(dir / "w.json");      // comm groups beside the set: not a rank file
  touch(dir / "other.0.et");  // another set in the same directory
  auto set = TraceSet::discover((dir / "w").string());
  ASSERT_EQ(set.world_size(), 11);
  for (int r = 0; r < 11; ++r) {
    EXPECT_EQ(set.files()[r].rank, r);
    EXPECT_EQ(fs::path(set.files()[r].path).filename(), "w." + std::to_string(r) + ".et");
  }
}

TEST(TraceSetDiscover, AcceptsGzipAndJsonRankFiles) {
  auto dir = etwire::testing::make_scratch_dir("set");
  touch(dir / "t.0.et.gz");
  touch(dir / "t.1.json");
  auto set = TraceSet::discover((dir / "t").string());
  EXPECT_EQ(set.world_size(), 2);
}

TEST(TraceSetDiscover, DirectoryWithOneSet) {
  auto dir = etwire::testing::make_scratch_dir("set");
  touch(dir / "a.0.et");
  touch(dir / "a.1.et");
  auto set = TraceSet::discover(dir.string());
  EXPECT_EQ(set.world_size(), 2);
  EXPECT_EQ(set.spec(), (dir / "a").string());
}

TEST(TraceSetDiscover, DirectoryWithSeveralSetsIsAnError) {
  auto dir = etwire::testing::make_scratch_dir("set");
  touch(dir / "a.0.et");
  touch(dir / "b.0.et");
  EXPECT_THAT(error_of([&] { TraceSet::discover(dir.string()); }),
              HasSubstr("several trace sets (a, b)"));
}

TEST(TraceSetDiscover, SingleFileIsAOneRankSet) {
  auto dir = etwire::testing::make_scratch_dir("set");
  touch(dir / "x.3.et");
  auto set = TraceSet::discover((dir / "x.3.et").string());
  EXPECT_EQ(set.world_size(), 1);
}

TEST(TraceSetDiscover, MissingRankIsNamed) {
  auto dir = etwire::testing::make_scratch_dir("set");
  for (int r : {0, 1, 3}) touch(dir / ("w." + std::to_string(r) + ".et"));
  std::string msg = error_of([&] { TraceSet::discover((dir / "w").string()); });
  EXPECT_THAT(msg, HasSubstr("rank file 2 is missing"));
  EXPECT_THAT(msg, HasSubstr((dir / "w").string()));
}

TEST(TraceSetDiscover, RankZeroMissing) {
  auto dir = etwire::testing::make_scratch_dir("set");
  touch(dir / "w.1.et");
  EXPECT_THAT(error_of([&] { TraceSet::discover((dir / "w").string()); }),
              HasSubstr("rank file 0 is missing"));
}

TEST(TraceSetDiscover, SameRankInTwoFormatsIsAmbiguous) {
  auto dir = etwire::testing::make_scratch_dir("set");
  touch(dir / "w.0.et");
  touch(dir / "w.0.json");
  EXPECT_THAT(error_of([&] { TraceSet::discover((dir / "w").string()); }),
              HasSubstr("rank 0 has two files"));
}

TEST(TraceSetDiscover, NothingMatches) {
  auto dir = etwire::testing::make_scratch_dir("set");
  EXPECT_THAT(error_of([&] { TraceSet::discover((dir / "nope").string()); }),
              HasSubstr("no rank files named"));
  EXPECT_THAT(error_of([&] { TraceSet::discover((dir / "missing-dir/nope").string()); }),
              HasSubstr("no such file or directory"));
}

TEST(TraceSetDiscover, ExpectedWorldSizeIsChecked) {
  auto dir = etwire::testing::make_scratch_dir("set");
  touch(dir / "w.0.et");
  touch(dir / "w.1.et");
  EXPECT_EQ(TraceSet::discover((dir / "w").string(), 2).world_size(), 2);
  EXPECT_THAT(error_of([&] { TraceSet::discover((dir / "w").string(), 4); }),
              HasSubstr("expected 4 ranks but found 2 rank files"));
}

// A symlink loop is not a file: only where the set needs it (a rank file's name, the set's own
// path) is it an error, which names it; elsewhere in the directory it is ignored like any other
// file that is not a rank file.
TEST(TraceSetDiscover, SymlinkLoopsAreNamedWhereTheSetNeedsThem) {
  auto dir = etwire::testing::make_scratch_dir("set");
  touch(dir / "w.0.et");
  fs::create_symlink("loop", dir / "loop");
  EXPECT_EQ(TraceSet::discover(dir.string()).world_size(), 1);
  EXPECT_EQ(TraceSet::discover((dir / "w").string()).world_size(), 1);

  fs::create_symlink("w.1.et", dir / "w.1.et");
  const std::string rank_file = (dir / "w.1.et").string();
  EXPECT_EQ(error_of([&] { TraceSet::discover((dir / "w").string()); }),
            rank_file + ": not readable: Too many levels of symbolic links");
  EXPECT_EQ(error_of([&] { TraceSet::discover((dir / "loop").string()); }),
            (dir / "loop").string() + ": not readable: Too many levels of symbolic links");
  EXPECT_EQ(error_of([&] { TraceSet::discover((dir / "loop/w").string()); }),
            (dir / "loop/w").string() + ": not readable: Too many levels of symbolic links");
}

TEST(PgName, DefaultGroupRules) {
  EXPECT_FALSE(parse_pg_name(std::nullopt)->explicit_id);
  EXPECT_FALSE(parse_pg_name(std::string(""))->explicit_id);
  // "0" names group 0 as "0.0" does; whether that is all ranks is the comm-group file's to say.
  auto zero = parse_pg_name(std::string("0"));
  ASSERT_TRUE(zero);
  EXPECT_TRUE(zero->explicit_id);
  EXPECT_EQ(zero->id, 0);
  auto zero_float = parse_pg_name(std::string("0.0"));
  ASSERT_TRUE(zero_float);
  EXPECT_TRUE(zero_float->explicit_id);
  EXPECT_EQ(zero_float->id, 0);
  EXPECT_EQ(parse_pg_name(std::string("1.0"))->id, 1);
  EXPECT_EQ(parse_pg_name(std::string("17"))->id, 17);
  EXPECT_FALSE(parse_pg_name(std::string("tp_group")));
  EXPECT_FALSE(parse_pg_name(std::string("-3")));
}

TEST(CommGroups, ParsesGroupsInFileOrder) {
  auto groups = CommGroups::from_json_text(R"({"1": [3, 1, 2], "10": [0]})", "g.json");
  ASSERT_NE(groups.find(1), nullptr);
  EXPECT_EQ(*groups.find(1), (std::vector<int32_t>{3, 1, 2}));
  EXPECT_EQ(*groups.find(10), (std::vector<int32_t>{0}));
  EXPECT_EQ(groups.find(2), nullptr);
}

TEST(CommGroups, BadFilesNameFileAndGroup) {
  auto err = [](const std::string& text) {
    return error_of([&] { CommGroups::from_json_text(text, "groups.json"); });
  };
  EXPECT_THAT(err("{\"1\": [0, 1"), HasSubstr("groups.json: not valid JSON"));
  EXPECT_THAT(err("[0, 1]"), HasSubstr("expected a JSON object"));
  EXPECT_THAT(err(R"({"x": [0]})"), HasSubstr("group key \"x\" is not a non-negative integer"));
  EXPECT_THAT(err(R"({"1": 3})"), HasSubstr("group \"1\": expected an array of ranks"));
  EXPECT_THAT(err(R"({"1": [0, -1]})"), HasSubstr("group \"1\": -1 is not a valid rank"));
  EXPECT_THAT(err(R"({"1": [0, "a"]})"), HasSubstr("\"a\" is not a valid rank"));
  EXPECT_THAT(err(R"({"2": [0, 1, 0]})"), HasSubstr("group \"2\": rank 0 is listed twice"));
  EXPECT_THAT(err(R"({"2": []})"), HasSubstr("group \"2\" has no ranks"));
  EXPECT_THAT(err(R"({"1": [0], "01": [1]})"), HasSubstr("group 1 is defined twice"));
  EXPECT_THAT(error_of([] { CommGroups::load("/nonexistent/groups.json"); }),
              HasSubstr("/nonexistent/groups.json: cannot open comm-group file"));
}

class TraceSetGroups : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = etwire::testing::make_scratch_dir("groups");
    for (int r = 0; r < 4; ++r) touch(dir_ / ("w." + std::to_string(r) + ".et"));
    set_ = TraceSet::discover((dir_ / "w").string());
  }
  TraceNode coll(const std::optional<std::string>& pg) {
    TraceNode node;
    node.id = 7;
    node.record_index = 3;
    node.type = NodeType::kCommColl;
    node.comm.pg_name = pg;
    return node;
  }
  fs::path dir_;
  TraceSet set_;
};

// A group 0 the comm-group file defines is what "0" names, as "0.0" does (ASTRA-sim's torus sets
// name their first row "0"); an absent or empty pg_name stays the implicit all-ranks group, kept
// apart from it.
TEST_F(TraceSetGroups, FileDefinitionOfGroupZeroWins) {
  set_.set_comm_groups(CommGroups::from_json_text(R"({"0": [0, 1], "1": [2, 3]})", "g.json"));
  auto all = set_.resolve_group(coll(std::nullopt), "f");
  EXPECT_EQ(all.id, 0);
  EXPECT_EQ(all.members, (std::vector<int32_t>{0, 1, 2, 3}));
  EXPECT_EQ(set_.resolve_group(coll(""), "f").members, (std::vector<int32_t>{0, 1, 2, 3}));
  EXPECT_EQ(set_.node_group(coll(std::nullopt), "f").key, kAllRanksGroup);
  for (const char* zero : {"0", "0.0"}) {
    SCOPED_TRACE(zero);
    EXPECT_EQ(set_.resolve_group(coll(zero), "f").members, (std::vector<int32_t>{0, 1}));
    const NodeGroup group = set_.node_group(coll(zero), "f");
    EXPECT_EQ(group.key, 0);
    EXPECT_EQ(group.members, (std::vector<int32_t>{0, 1}));
  }
  auto g1 = set_.resolve_group(coll("1.0"), "f");
  EXPECT_EQ(g1.id, 1);
  EXPECT_EQ(g1.members, (std::vector<int32_t>{2, 3}));
}

// Without a group 0 in the file (or without a file), "0" is the implicit all-ranks group.
TEST_F(TraceSetGroups, ZeroIsAllRanksWhereTheFileDoesNotDefineIt) {
  for (const char* zero : {"0", "0.0"}) {
    SCOPED_TRACE(zero);
    EXPECT_EQ(set_.node_group(coll(zero), "f").key, kAllRanksGroup);
    EXPECT_EQ(set_.resolve_group(coll(zero), "f").members, (std::vector<int32_t>{0, 1, 2, 3}));
  }
  set_.set_comm_groups(CommGroups::from_json_text(R"({"1": [2, 3]})", "g.json"));
  const NodeGroup group = set_.node_group(coll("0"), "f");
  EXPECT_EQ(group.key, kAllRanksGroup);
  EXPECT_EQ(group.members, (std::vector<int32_t>{0, 1, 2, 3}));
}

TEST_F(TraceSetGroups, UndefinedGroupErrorsAtTheNode) {
  std::string no_file = error_of([&] { set_.resolve_group(coll("5"), "rank1.et"); });
  EXPECT_THAT(no_file, HasSubstr("rank1.et: record 3 (node id 7)"));
  EXPECT_THAT(no_file, HasSubstr("no comm-group file was given"));
  set_.set_comm_groups(CommGroups::from_json_text(R"({"1": [2, 3]})", "g.json"));
  EXPECT_THAT(error_of([&] { set_.resolve_group(coll("5"), "rank1.et"); }),
              HasSubstr("names process group 5, which g.json does not define"));
  EXPECT_THAT(error_of([&] { set_.resolve_group(coll("tp"), "rank1.et"); }),
              HasSubstr("pg_name \"tp\" does not start with a group number"));
}

TEST_F(TraceSetGroups, GroupRankOutsideTheWorldSuggestsMissingFiles) {
  std::string msg = error_of(
      [&] { set_.set_comm_groups(CommGroups::from_json_text(R"({"1": [2, 9]})", "g.json")); });
  EXPECT_THAT(msg, HasSubstr("g.json"));
  EXPECT_THAT(msg, HasSubstr("group 1 lists rank 9"));
  EXPECT_THAT(msg, HasSubstr("are rank files missing?"));
}

TEST(TraceSetUpstream, T2DRowAndColumnGroupsResolve) {
  ETWIRE_REQUIRE_UPSTREAM_TRACES();
  auto dir = etwire::testing::upstream_traces() / "astra-sim-artifacts/T2D-analytical";
  auto set = TraceSet::discover((dir / "trace").string());
  ASSERT_EQ(set.world_size(), 16);
  set.set_comm_groups(CommGroups::load((dir / "comm_group.json").string()));
  TraceNode node;
  node.comm.pg_name = "2.0";
  EXPECT_EQ(set.resolve_group(node, "f").members, (std::vector<int32_t>{8, 9, 10, 11}));
  node.comm.pg_name = "7";
  EXPECT_EQ(set.resolve_group(node, "f").members, (std::vector<int32_t>{3, 7, 11, 15}));
}

TEST(TraceSetUpstream, FsdpGroupsNeedTheSecondCommGroupFile) {
  ETWIRE_REQUIRE_UPSTREAM_TRACES();
  auto dir =
      etwire::testing::upstream_traces() / "astra-sim-hybrid-parallelism/pytorch_fsdp_2ranks";
  auto set = TraceSet::discover((dir / "chakra_trace").string());
  ASSERT_EQ(set.world_size(), 2);
  set.set_comm_groups(CommGroups::load((dir / "comm_group.test-1.json").string()));
  // The traces use groups "1" and "2"; test-1's file defines only group 1.
  TraceNode node;
  node.comm.pg_name = "2";
  EXPECT_THAT(error_of([&] { set.resolve_group(node, "f"); }),
              HasSubstr("comm_group.test-1.json does not define"));
  set.set_comm_groups(CommGroups::load((dir / "comm_group.test-2.json").string()));
  EXPECT_EQ(set.resolve_group(node, "f").members, (std::vector<int32_t>{0, 1}));
}

}  // namespace
}  // namespace etwire::trace

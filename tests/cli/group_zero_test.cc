// A comm-group file that defines a group "0" of its own (issue 39, N7): ASTRA-sim's torus example
// sets name their first row group "0", so "0" is the file's group where the file defines it and
// the implicit all-ranks group only where it does not. `inspect` says which, and `run` replays it.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <iterator>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "tests/testing/test_paths.h"

namespace etwire {
namespace {

using ::testing::HasSubstr;
using ::testing::MatchesRegex;
namespace fs = std::filesystem;

etwire::testing::CommandResult etwire(const std::string& args) {
  return etwire::testing::run_etwire(args);
}

std::string slurp(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

void write_file(const fs::path& path, const std::string& text) {
  std::ofstream(path) << text;
}

std::vector<std::string> fields(const std::string& line) {
  std::vector<std::string> out;
  std::istringstream in(line);
  for (std::string field; std::getline(in, field, ',');) out.push_back(field);
  return out;
}

// Four ranks as two rows of a torus: ranks 0 and 1 all-reduce on pg_name "0", ranks 2 and 3 on
// "1"; the comm-group file defines both rows. Returns the set's prefix.
std::string two_rows(const fs::path& dir) {
  for (const char* pg : {"0", "1"}) {
    auto w = etwire(std::string("synth microbench -c all_reduce -b 64KiB -n 4 -i 2 --pg ") + pg +
                    " -o " + (dir / ("pg" + std::string(pg))).string());
    EXPECT_EQ(w.code, 0) << w.output;
  }
  for (int rank = 0; rank < 4; ++rank) {
    const std::string from = rank < 2 ? "pg0" : "pg1";
    fs::copy_file(dir / (from + "." + std::to_string(rank) + ".et"),
                  dir / ("rows." + std::to_string(rank) + ".et"));
  }
  write_file(dir / "groups.json", R"({"0": [0, 1], "1": [2, 3]})");
  return (dir / "rows").string();
}

TEST(GroupZero, InspectShowsTheFilesGroupZeroWithItsRanks) {
  const fs::path dir = etwire::testing::make_scratch_dir("group-zero");
  const std::string prefix = two_rows(dir);
  const std::string groups = (dir / "groups.json").string();
  auto r = etwire("inspect --json " + prefix + " -g " + groups);
  ASSERT_EQ(r.code, 0) << r.output;
  auto j = nlohmann::json::parse(r.output);
  ASSERT_EQ(j["process_groups"].size(), 2u) << r.output;
  const auto& zero = j["process_groups"][0];
  EXPECT_EQ(zero["id"], 0);
  EXPECT_EQ(zero["defined_by"], "comm-group file");
  EXPECT_EQ(zero["members"], nlohmann::json::array({0, 1}));
  EXPECT_EQ(zero["consistent"], true);
  EXPECT_EQ(j["process_groups"][1]["members"], nlohmann::json::array({2, 3}));
  EXPECT_EQ(j["process_groups"][1]["consistent"], true);

  auto text = etwire("inspect " + prefix + " -g " + groups);
  ASSERT_EQ(text.code, 0) << text.output;
  EXPECT_THAT(text.output, HasSubstr("defined by"));
  EXPECT_THAT(text.output, MatchesRegex("(.|\n)*\n0 +file +\"0\" +0,1 +2 (.|\n)*"));
}

// Without a definition in the file, "0" stays the implicit all-ranks group, said as such.
TEST(GroupZero, WithoutADefinitionZeroIsAllRanks) {
  const fs::path dir = etwire::testing::make_scratch_dir("group-zero");
  auto w =
      etwire("synth microbench -c all_reduce -b 64KiB -n 4 --pg 0 -o " + (dir / "all").string());
  ASSERT_EQ(w.code, 0) << w.output;
  write_file(dir / "groups.json", R"({"1": [2, 3]})");
  auto r =
      etwire("inspect --json " + (dir / "all").string() + " -g " + (dir / "groups.json").string());
  ASSERT_EQ(r.code, 0) << r.output;
  auto j = nlohmann::json::parse(r.output);
  ASSERT_EQ(j["process_groups"].size(), 1u) << r.output;
  EXPECT_TRUE(j["process_groups"][0]["id"].is_null());
  EXPECT_EQ(j["process_groups"][0]["defined_by"], "all ranks (implicit)");
  EXPECT_EQ(j["process_groups"][0]["members"], nlohmann::json::array({0, 1, 2, 3}));
}

TEST(GroupZero, RunReplaysEachRowOnItsOwn) {
  const fs::path dir = etwire::testing::make_scratch_dir("group-zero");
  const std::string prefix = two_rows(dir);
  write_file(dir / "run.yaml",
             "run: {name: rows, seed: 1}\n"
             "workload:\n"
             "  jobs:\n"
             "    - {name: rows, trace: rows, comm_groups: groups.json}\n"
             "ports:\n"
             "  - {name: host, count: 4, backend: loopback}\n");
  auto r = etwire("run " + (dir / "run.yaml").string() + " --out " + (dir / "out").string());
  ASSERT_EQ(r.code, 0) << r.output;
  // Every instance is one row's: its group is the file's 0 or 1, of two members, never the
  // all-ranks group of four whose other members never come.
  std::istringstream csv(slurp(dir / "out" / "collectives.csv"));
  std::string line;
  std::getline(csv, line);
  const std::vector<std::string> header = fields(line);
  const auto column = [&](const std::string& name) {
    return static_cast<size_t>(std::find(header.begin(), header.end(), name) - header.begin());
  };
  const size_t group = column("group");
  const size_t size = column("group_size");
  ASSERT_LT(size, header.size()) << line;
  std::map<std::string, int> instances;
  while (std::getline(csv, line)) {
    const std::vector<std::string> row = fields(line);
    ASSERT_LT(size, row.size()) << line;
    EXPECT_EQ(row[size], "2") << line;
    ++instances[row[group]];
  }
  EXPECT_EQ(instances, (std::map<std::string, int>{{"0", 2}, {"1", 2}}));
}

TEST(GroupZero, UpstreamTorusRowGroupZeroIsTheFiles) {
  ETWIRE_REQUIRE_UPSTREAM_TRACES();
  const fs::path dir = etwire::testing::upstream_traces() / "astra-sim-artifacts/T2D-analytical";
  auto r = etwire("inspect --json " + (dir / "trace").string() + " -g " +
                  (dir / "comm_group.json").string());
  ASSERT_EQ(r.code, 0) << r.output;
  auto j = nlohmann::json::parse(r.output);
  ASSERT_EQ(j["process_groups"].size(), 8u);
  for (const auto& g : j["process_groups"]) {
    EXPECT_EQ(g["defined_by"], "comm-group file");
    EXPECT_EQ(g["consistent"], true);
  }
  EXPECT_EQ(j["process_groups"][0]["id"], 0);
  EXPECT_EQ(j["process_groups"][0]["members"], nlohmann::json::array({0, 1, 2, 3}));
}

}  // namespace
}  // namespace etwire

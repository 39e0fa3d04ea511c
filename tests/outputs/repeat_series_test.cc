// The results directory of `etwire run --repeat N`: repeats.json written after each repeat and
// read back as the repeats' directories, in order; a directory without it is no series; a file
// that is not what etwire writes, or that names a directory outside its series, is refused naming
// the file and the place; a directory holding a single run's summary.json beside it is refused.
#include "outputs/repeat_series.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

namespace etwire::outputs {
namespace {

namespace fs = std::filesystem;

class RepeatSeries : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::path(::testing::TempDir()) /
           ("repeat-series-" +
            std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  void write(const std::string& name, const std::string& text) {
    std::ofstream(dir_ / name) << text;
  }
  // The message read_repeat_dirs refuses the directory with ("" when it reads it).
  std::string refusal() {
    try {
      read_repeat_dirs(dir_);
    } catch (const RepeatSeriesError& e) {
      return e.what();
    }
    return "";
  }

  fs::path dir_;
};

TEST_F(RepeatSeries, ListsTheRepeatsWrittenSoFarInOrder) {
  EXPECT_EQ(repeat_dir_name(3), "repeat-3");
  EXPECT_FALSE(read_repeat_dirs(dir_)) << "no repeats.json: no series";
  write_repeats_json(dir_, 3, {{1, 7, 0}});
  auto dirs = read_repeat_dirs(dir_);
  ASSERT_TRUE(dirs);
  EXPECT_EQ(*dirs, std::vector<fs::path>{dir_ / "repeat-1"});
  write_repeats_json(dir_, 3, {{1, 7, 0}, {2, 8, 1}});
  dirs = read_repeat_dirs(dir_);
  ASSERT_TRUE(dirs);
  EXPECT_EQ(*dirs, (std::vector<fs::path>{dir_ / "repeat-1", dir_ / "repeat-2"}));
}

TEST_F(RepeatSeries, RefusesWhatEtwireDoesNotWrite) {
  const std::string path = (dir_ / "repeats.json").string();
  write("repeats.json", "[1, 2");
  EXPECT_EQ(refusal(), path +
                           ": not valid JSON: expected an object as `etwire run --repeat` "
                           "writes it");
  write("repeats.json", R"({"planned": 2})");
  EXPECT_EQ(refusal(), path + ": expected the keys planned and runs (an array)");
  write("repeats.json", R"({"planned": 0, "runs": []})");
  EXPECT_EQ(refusal(), path + ": planned: expected a whole number from 1 to 4294967295");
  write("repeats.json", R"({"planned": 2, "runs": []})");
  EXPECT_EQ(refusal(), path + ": runs: no repeat finished, so there is nothing to compare");
  write(
      "repeats.json",
      R"({"planned": 1, "runs": [{"repeat": 1, "dir": "repeat-1"}, {"repeat": 2, "dir": "repeat-2"}]})");
  EXPECT_EQ(refusal(), path + ": runs: 2 repeats listed, more than the 1 planned");
  write("repeats.json", R"({"planned": 2, "runs": [{"repeat": 2, "dir": "repeat-2"}]})");
  EXPECT_EQ(refusal(), path + ": runs[0].repeat: expected a whole number from 1 to 1");
  write("repeats.json", R"({"planned": 2, "runs": ["repeat-1"]})");
  EXPECT_EQ(refusal(), path + ": runs[0]: expected an object with repeat and dir");
}

TEST_F(RepeatSeries, NeverFollowsADirectoryOutsideTheSeries) {
  const std::string path = (dir_ / "repeats.json").string();
  write("repeats.json", R"({"planned": 2, "runs": [{"repeat": 1, "dir": "../elsewhere"}]})");
  EXPECT_EQ(refusal(), path + ": runs[0].dir: expected \"repeat-1\"");
  write("repeats.json", R"({"planned": 2, "runs": [{"repeat": 1, "dir": "/etc"}]})");
  EXPECT_EQ(refusal(), path + ": runs[0].dir: expected \"repeat-1\"");
}

TEST_F(RepeatSeries, RefusesADirectoryHoldingASingleRunAsWell) {
  write_repeats_json(dir_, 1, {{1, 1, 0}});
  write("summary.json", "{}");
  EXPECT_NE(refusal().find("repeats.json: the directory holds both a series of repeated runs and "
                           "a single run's summary.json"),
            std::string::npos)
      << refusal();
}

}  // namespace
}  // namespace etwire::outputs

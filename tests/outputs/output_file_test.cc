// How result files reach the disk: whole or not at all when written at the end, in whole lines
// when streamed, and a write error said when the file is closed.
#include "outputs/output_file.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <stdexcept>
#include <string>
#include <vector>

#include "tests/testing/test_paths.h"

namespace etwire::outputs {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

std::string slurp(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const std::runtime_error& e) {
    return e.what();
  }
  return "(no error)";
}

class OutputFile : public ::testing::Test {
 protected:
  void SetUp() override { dir_ = etwire::testing::make_scratch_dir("output-file"); }
  void TearDown() override { fs::remove_all(dir_); }

  // Everything in the directory: a temporary file left behind shows here.
  std::vector<std::string> names() const {
    std::vector<std::string> out;
    for (const auto& entry : fs::directory_iterator(dir_)) {
      out.push_back(entry.path().filename().string());
    }
    std::sort(out.begin(), out.end());
    return out;
  }

  fs::path dir_;
};

TEST_F(OutputFile, WholeFileReplacesThePreviousOneAndLeavesNothingElse) {
  const std::string path = (dir_ / "summary.json").string();
  write_file_atomically(path, "old\n");
  write_file_atomically(path, "new\n");
  EXPECT_EQ(slurp(path), "new\n");
  EXPECT_EQ(names(), std::vector<std::string>{"summary.json"});
}

TEST_F(OutputFile, ReplacedAtCloseOnlyWhenClosed) {
  const std::string path = (dir_ / "qps.csv").string();
  write_file_atomically(path, "previous\n");
  {
    StreamedFile file(path, StreamedFile::Mode::kReplaceAtClose);
    file.buffer() += "half of a file\n";
    file.appended();
    file.flush();
    EXPECT_EQ(slurp(path), "previous\n");
    // Destroyed without close(): whoever wrote it gave up, so nothing replaces the file.
  }
  EXPECT_EQ(slurp(path), "previous\n");
  EXPECT_EQ(names(), std::vector<std::string>{"qps.csv"});

  StreamedFile file(path, StreamedFile::Mode::kReplaceAtClose);
  file.buffer() += "a,b\n1,2\n";
  file.close();
  EXPECT_EQ(slurp(path), "a,b\n1,2\n");
  EXPECT_EQ(names(), std::vector<std::string>{"qps.csv"});
}

// /dev/full refuses every write (ENOSPC): a streamed file says so when it is closed, with how
// many lines it holds and how many it lost, and flushing in the middle of a run does not throw.
TEST_F(OutputFile, StreamedWriteErrorIsSaidAtClose) {
  StreamedFile file("/dev/full");
  file.buffer() += "header\n";
  for (int i = 0; i < 3; ++i) {
    file.buffer() += "row\n";
    file.appended();
  }
  EXPECT_NO_THROW(file.flush());
  file.buffer() += "late row\n";
  file.appended();
  EXPECT_EQ(error_of([&] { file.close(); }),
            "/dev/full: cannot write: No space left on device; the file holds its first 0 lines, "
            "whole, and 5 more were not written");
}

// A path that is not a regular file is written through, not replaced by a rename.
TEST_F(OutputFile, WholeFileToADeviceIsWrittenThrough) {
  write_file_atomically("/dev/null", "text\n");
  EXPECT_TRUE(fs::is_character_file("/dev/null"));
  EXPECT_THAT(error_of([] { write_file_atomically("/dev/full", "text\n"); }),
              HasSubstr("/dev/full: cannot write: No space left on device"));
  EXPECT_TRUE(fs::is_character_file("/dev/full"));
}

// A link planted where a results file goes, or where its temporary file would be, never sends the
// write elsewhere: the file replaces the link, and what the link points to is left as it was.
TEST_F(OutputFile, ALinkInTheResultsDirectoryIsReplacedNotWrittenThrough) {
  const fs::path outside = etwire::testing::make_scratch_dir("output-file-outside");
  const auto planted = [&](const std::string& name) {
    const fs::path victim = outside / name;
    std::ofstream(victim) << "keep\n";
    return victim;
  };
  const fs::path summary = dir_ / "summary.json";
  const fs::path summary_victim = planted("summary");
  fs::create_symlink(summary_victim, summary);
  write_file_atomically(summary.string(), "results\n");

  const fs::path flows = dir_ / "flows.csv";
  const fs::path flows_victim = planted("flows");
  fs::create_symlink(flows_victim, flows);
  StreamedFile streamed(flows.string());
  streamed.buffer() += "a,b\n";
  streamed.close();

  const fs::path qps = dir_ / "qps.csv";
  const fs::path temporary_victim = planted("temporary");
  fs::create_symlink(temporary_victim, dir_ / (".qps.csv." + std::to_string(::getpid()) + ".tmp"));
  write_file_atomically(qps.string(), "q\n");

  for (const fs::path& victim : {summary_victim, flows_victim, temporary_victim}) {
    EXPECT_EQ(slurp(victim), "keep\n") << victim;
  }
  for (const fs::path& file : {summary, flows, qps}) {
    EXPECT_TRUE(fs::is_regular_file(fs::symlink_status(file))) << file;
  }
  EXPECT_EQ(slurp(summary), "results\n");
  EXPECT_EQ(slurp(flows), "a,b\n");
  EXPECT_EQ(names(), (std::vector<std::string>{"flows.csv", "qps.csv", "summary.json"}));
  fs::remove_all(outside);
}

// A link to a device is how /dev/stdout is named: written through.
TEST_F(OutputFile, ALinkToADeviceIsWrittenThrough) {
  const fs::path link = dir_ / "out";
  fs::create_symlink("/dev/null", link);
  write_file_atomically(link.string(), "text\n");
  StreamedFile streamed(link.string());
  streamed.buffer() += "row\n";
  streamed.close();
  EXPECT_TRUE(fs::is_symlink(link));
  EXPECT_TRUE(fs::is_character_file("/dev/null"));
}

// Results files are for their owner and group (issue 39, N27): 0640, or less as the umask says,
// whether written whole, replaced at close or streamed, and also where an earlier run left a
// world-readable one.
TEST_F(OutputFile, ResultsFilesAreNotWorldReadable) {
  const auto mode_of = [](const std::string& path) {
    struct stat st {};
    EXPECT_EQ(::stat(path.c_str(), &st), 0) << path;
    return st.st_mode & 07777;
  };
  const mode_t previous = ::umask(0);
  for (const auto& [mask, expected] :
       {std::pair<mode_t, mode_t>{0, 0640}, {022, 0640}, {027, 0640}, {077, 0600}}) {
    SCOPED_TRACE(mask);
    ::umask(mask);
    const std::string whole = (dir_ / "summary.json").string();
    write_file_atomically(whole, "{}\n");
    EXPECT_EQ(mode_of(whole), expected);
    for (const auto mode : {StreamedFile::Mode::kInPlace, StreamedFile::Mode::kReplaceAtClose}) {
      const std::string streamed = (dir_ / "flows.csv").string();
      std::ofstream(streamed) << "an earlier run's\n";
      fs::permissions(streamed, fs::perms(0644), fs::perm_options::replace);
      StreamedFile file(streamed, mode);
      file.buffer() += "a\n";
      file.appended();
      file.close();
      EXPECT_EQ(mode_of(streamed), expected);
    }
  }
  ::umask(previous);
}

TEST_F(OutputFile, UnwritableDirectoryNamesTheFile) {
  const std::string path = (dir_ / "missing" / "summary.json").string();
  EXPECT_EQ(error_of([&] { write_file_atomically(path, "x"); }),
            path + ": No such file or directory");
}

}  // namespace
}  // namespace etwire::outputs

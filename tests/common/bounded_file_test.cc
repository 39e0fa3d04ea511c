#include "common/bounded_file.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>

#include "tests/testing/test_paths.h"

namespace etwire {
namespace {

namespace fs = std::filesystem;

InputFileError read_error(const std::string& path, uint64_t limit) {
  try {
    read_bounded_file(path, limit, "a test input");
  } catch (const InputFileError& e) {
    return e;
  }
  ADD_FAILURE() << path << ": read without an error";
  return InputFileError(InputFileError::Reason::kRead, 0, "");
}

class BoundedFile : public ::testing::Test {
 protected:
  void SetUp() override { dir_ = etwire::testing::make_scratch_dir("bounded-file"); }
  void TearDown() override { fs::remove_all(dir_); }

  std::string write(const std::string& name, const std::string& text) {
    const fs::path path = dir_ / name;
    std::ofstream(path, std::ios::binary) << text;
    return path.string();
  }

  fs::path dir_;
};

TEST_F(BoundedFile, ReadsAFileUpToTheLimit) {
  EXPECT_EQ(read_bounded_file(write("a", "12345"), 5, "a test input"), "12345");
  EXPECT_EQ(read_bounded_file(write("empty", ""), 5, "a test input"), "");
}

TEST_F(BoundedFile, RefusesARegularFileOverTheLimitBeforeReadingIt) {
  const std::string path = write("big", "");
  fs::resize_file(path, uint64_t{1} << 40);  // sparse: a TiB read would take minutes
  const InputFileError e = read_error(path, uint64_t{64} << 20);
  EXPECT_EQ(e.reason(), InputFileError::Reason::kTooLarge);
  EXPECT_STREQ(e.what(), "1099511627776 bytes: larger than 64 MiB, the limit for a test input");
}

TEST_F(BoundedFile, StopsAnEndlessStreamAtTheLimit) {
  const InputFileError e = read_error("/dev/zero", uint64_t{1} << 20);
  EXPECT_EQ(e.reason(), InputFileError::Reason::kTooLarge);
  EXPECT_STREQ(e.what(),
               "larger than 1 MiB, the limit for a test input (an endless stream such as "
               "/dev/zero?)");
}

// A FIFO whose writer never stops: the reader gives up at the limit and closes its end, which
// ends the writer with EPIPE.
TEST_F(BoundedFile, StopsAFifoFedForever) {
  const std::string path = (dir_ / "fifo").string();
  ASSERT_EQ(::mkfifo(path.c_str(), 0600), 0) << std::strerror(errno);
  std::thread writer([&] {
    const int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);
    if (fd < 0) return;
    const std::string chunk(4096, 'x');
    while (::write(fd, chunk.data(), chunk.size()) > 0) {
    }
    ::close(fd);
  });
  // SIGPIPE would end the test program instead of failing the writer's write().
  struct sigaction ignore {};
  struct sigaction old {};
  ignore.sa_handler = SIG_IGN;
  ::sigaction(SIGPIPE, &ignore, &old);
  const InputFileError e = read_error(path, uint64_t{1} << 20);
  writer.join();
  ::sigaction(SIGPIPE, &old, nullptr);
  EXPECT_EQ(e.reason(), InputFileError::Reason::kTooLarge);
}

TEST_F(BoundedFile, SaysWhyAFileCannotBeRead) {
  const InputFileError missing = read_error((dir_ / "missing").string(), 100);
  EXPECT_EQ(missing.reason(), InputFileError::Reason::kOpen);
  EXPECT_EQ(missing.error_number(), ENOENT);
  EXPECT_STREQ(missing.what(), "cannot open: No such file or directory");

  const InputFileError directory = read_error(dir_.string(), 100);
  EXPECT_EQ(directory.reason(), InputFileError::Reason::kRead);
  EXPECT_STREQ(directory.what(), "cannot read: Is a directory");
}

}  // namespace
}  // namespace etwire

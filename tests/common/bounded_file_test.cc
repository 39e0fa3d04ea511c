#include "common/bounded_file.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <future>
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
  // Held open for reading (and writing) so that the writer's open does not wait, and so that the
  // FIFO has a writer the moment the reader opens it, whoever runs first.
  const int held = ::open(path.c_str(), O_RDWR | O_CLOEXEC);
  ASSERT_GE(held, 0) << std::strerror(errno);
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
  ::close(held);  // the last reading end: the writer's next write fails
  writer.join();
  ::sigaction(SIGPIPE, &old, nullptr);
  EXPECT_EQ(e.reason(), InputFileError::Reason::kTooLarge);
}

// A FIFO no one writes is refused at once: a blocking open would wait for a writer forever.
TEST_F(BoundedFile, RefusesAFifoWithoutAWriterAtOnce) {
  const std::string path = (dir_ / "fifo").string();
  ASSERT_EQ(::mkfifo(path.c_str(), 0600), 0) << std::strerror(errno);
  auto read = std::async(std::launch::async, [&] { return read_error(path, 100); });
  // Only a reader stuck in its open gets here; a writer's open and close set it free.
  if (read.wait_for(std::chrono::seconds(60)) != std::future_status::ready) {
    const int fd = ::open(path.c_str(), O_WRONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd >= 0) ::close(fd);
    read.wait();
    FAIL() << "the read waited for a writer";
  }
  const InputFileError e = read.get();
  EXPECT_EQ(e.reason(), InputFileError::Reason::kRead);
  EXPECT_STREQ(e.what(), "a FIFO with no writer: nothing would ever come to read");
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

#include "common/bounded_file.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "common/exact_bytes.h"

namespace etwire {

namespace {

constexpr size_t kChunkBytes = size_t{64} << 10;

// Closes the descriptor on every way out, thrown errors included.
class FileDescriptor {
 public:
  explicit FileDescriptor(int fd) : fd_(fd) {}
  ~FileDescriptor() {
    if (fd_ >= 0) ::close(fd_);
  }
  FileDescriptor(const FileDescriptor&) = delete;
  FileDescriptor& operator=(const FileDescriptor&) = delete;
  int get() const { return fd_; }

 private:
  int fd_;
};

[[noreturn]] void fail_errno(InputFileError::Reason reason, int error_number) {
  const char* verb = reason == InputFileError::Reason::kOpen ? "cannot open" : "cannot read";
  throw InputFileError(reason, error_number,
                       fmt::format("{}: {}", verb, std::strerror(error_number)));
}

[[noreturn]] void fail_too_large(std::string problem) {
  throw InputFileError(InputFileError::Reason::kTooLarge, 0, problem);
}

// Opened without waiting (O_NONBLOCK), a FIFO tells whether anyone holds its writing end: a read
// finds the end of the file when no one does, and EAGAIN when a writer is there but has written
// nothing yet. Without a writer a blocking open would wait forever for one; with one, the read
// that follows waits for what it writes. Returns the bytes already there (at most one).
std::string refuse_fifo_without_writer(int fd) {
  char first = 0;
  for (;;) {
    const ssize_t got = ::read(fd, &first, 1);
    if (got == 1) return std::string(1, first);
    if (got == 0) {
      throw InputFileError(InputFileError::Reason::kRead, 0,
                           "a FIFO with no writer: nothing would ever come to read");
    }
    if (errno == EAGAIN) return {};
    if (errno != EINTR) fail_errno(InputFileError::Reason::kRead, errno);
  }
}

// Reads of what is not a regular file wait for data again, once the open has not waited.
void make_blocking(int fd) {
  const int flags = ::fcntl(fd, F_GETFL);
  if (flags < 0 || ::fcntl(fd, F_SETFL, flags & ~O_NONBLOCK) != 0) {
    fail_errno(InputFileError::Reason::kRead, errno);
  }
}

}  // namespace

std::string too_large_message(uint64_t limit, std::string_view kind) {
  return fmt::format("larger than {}, the limit for {}", format_bytes_exact(limit), kind);
}

std::string read_bounded_file(const std::string& path, uint64_t limit, std::string_view kind) {
  // O_NONBLOCK: opening a FIFO no one writes would otherwise wait for a writer forever.
  const FileDescriptor fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK));
  if (fd.get() < 0) fail_errno(InputFileError::Reason::kOpen, errno);
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0) fail_errno(InputFileError::Reason::kRead, errno);
  if (S_ISDIR(st.st_mode)) fail_errno(InputFileError::Reason::kRead, EISDIR);
  std::string text;
  if (S_ISREG(st.st_mode)) {
    if (static_cast<uint64_t>(st.st_size) > limit) {
      fail_too_large(fmt::format("{} bytes: {}", st.st_size, too_large_message(limit, kind)));
    }
    text.reserve(static_cast<size_t>(st.st_size));
  } else {
    if (S_ISFIFO(st.st_mode)) text = refuse_fifo_without_writer(fd.get());
    make_blocking(fd.get());
  }
  // One byte past the limit tells a file of exactly `limit` bytes from a longer one.
  while (text.size() <= limit) {
    const size_t old_size = text.size();
    const size_t want = static_cast<size_t>(std::min<uint64_t>(kChunkBytes, limit + 1 - old_size));
    text.resize(old_size + want);
    const ssize_t got = ::read(fd.get(), text.data() + old_size, want);
    if (got < 0) {
      const int error_number = errno;
      text.resize(old_size);
      if (error_number == EINTR) continue;
      fail_errno(InputFileError::Reason::kRead, error_number);
    }
    text.resize(old_size + static_cast<size_t>(got));
    if (got == 0) return text;
  }
  fail_too_large(too_large_message(limit, kind) + " (an endless stream such as /dev/zero?)");
}

}  // namespace etwire

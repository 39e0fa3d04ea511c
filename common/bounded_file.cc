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

}  // namespace

std::string too_large_message(uint64_t limit, std::string_view kind) {
  return fmt::format("larger than {}, the limit for {}", format_bytes_exact(limit), kind);
}

std::string read_bounded_file(const std::string& path, uint64_t limit, std::string_view kind) {
  const FileDescriptor fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
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

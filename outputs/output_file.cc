#include "outputs/output_file.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <stdexcept>

#include "common/output_path.h"

namespace etwire::outputs {

namespace {

// Written out once the buffer reaches this size; the margin covers the longest line (a flow's 21
// numeric fields and a status; a queue sample with a port name), so the buffer never grows past
// its reserve.
constexpr size_t kFlushBytes = size_t{1} << 20;
constexpr size_t kLineMargin = 1024;

[[noreturn]] void fail(const std::string& path, std::string_view why) {
  throw std::runtime_error(fmt::format("{}: {}", path, why));
}

// Beside the file, so that the rename stays on one file system; hidden, and named by the
// process, so that a run writing the same directory does not take it over.
std::string temporary_for(const std::string& path) {
  const std::filesystem::path target(path);
  return (target.parent_path() /
          fmt::format(".{}.{}.tmp", target.filename().string(), static_cast<long>(::getpid())))
      .string();
}

// Results files are readable by their owner's group and no one else, or less as the umask says:
// a run's flows, ports and addresses are the lab's business, and emulator processes that an MPI
// launcher starts on another host take that host's login umask (often 022), not the user's.
constexpr mode_t kResultsFileMode = 0640;

// Opens the temporary file as a new file of this process's: never an existing file, and never
// through a link, whoever put one there. One left by an earlier process of the same number (a
// crash) is removed first; a link is removed, not followed.
int open_temporary(const std::string& temporary, const std::string& target) {
  constexpr int kFlags = O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC;
  int fd = ::open(temporary.c_str(), kFlags, kResultsFileMode);
  if (fd < 0 && errno == EEXIST && ::unlink(temporary.c_str()) == 0) {
    fd = ::open(temporary.c_str(), kFlags, kResultsFileMode);
  }
  if (fd < 0) fail(target, std::strerror(errno));
  return fd;
}

// Opens a results file to write in place (common/output_path.h).
int open_in_place(const std::string& path) {
  const int fd = open_output_path(path, kResultsFileMode);
  if (fd < 0) fail(path, std::strerror(errno));
  return fd;
}

// Writes as much of `text` as it can, retrying short writes and interrupted calls. Returns 0, or
// the errno that stopped it with `written` bytes out.
int write_all(int fd, std::string_view text, size_t& written) {
  written = 0;
  while (written < text.size()) {
    const ssize_t n = ::write(fd, text.data() + written, text.size() - written);
    if (n < 0) {
      if (errno == EINTR) continue;
      return errno;
    }
    written += static_cast<size_t>(n);
  }
  return 0;
}

// Closes `fd`; returns the errno of a deferred write error (NFS, quota) or 0. A retry after EINTR
// is not safe on Linux: the descriptor is gone either way.
int close_reporting(int fd) {
  return ::close(fd) != 0 && errno != EINTR ? errno : 0;
}

// Makes the temporary file the target: its bytes on disk first, so that a crash right after the
// rename cannot leave an empty file in place of the previous one. Returns what went wrong, or
// "" once the file is in place; on failure the temporary file is removed.
std::string publish(int fd, const std::string& temporary, const std::string& path) {
  std::string problem;
  if (::fsync(fd) != 0) problem = fmt::format("cannot write: {}", std::strerror(errno));
  if (const int error = close_reporting(fd); error != 0 && problem.empty()) {
    problem = fmt::format("cannot write: {}", std::strerror(error));
  }
  if (problem.empty() && std::rename(temporary.c_str(), path.c_str()) != 0) {
    problem = fmt::format("cannot rename {} to it: {}", temporary, std::strerror(errno));
  }
  if (!problem.empty()) ::unlink(temporary.c_str());
  return problem;
}

}  // namespace

void write_file_atomically(const std::string& path, std::string_view text) {
  if (written_through(path)) {
    StreamedFile file(path);
    file.buffer() += text;
    file.close();
    return;
  }
  const std::string temporary = temporary_for(path);
  const int fd = open_temporary(temporary, path);
  size_t written = 0;
  if (const int error = write_all(fd, text, written); error != 0) {
    ::close(fd);
    ::unlink(temporary.c_str());
    fail(path, fmt::format("cannot write: {}; not written", std::strerror(error)));
  }
  if (std::string problem = publish(fd, temporary, path); !problem.empty()) {
    fail(path, problem + "; not written");
  }
}

StreamedFile::StreamedFile(std::string path, Mode mode) : path_(std::move(path)), mode_(mode) {
  if (mode_ == Mode::kReplaceAtClose && written_through(path_)) mode_ = Mode::kInPlace;
  if (mode_ == Mode::kReplaceAtClose) temporary_ = temporary_for(path_);
  fd_ = mode_ == Mode::kReplaceAtClose ? open_temporary(temporary_, path_) : open_in_place(path_);
  buffer_.reserve(kFlushBytes + kLineMargin);
}

StreamedFile::~StreamedFile() {
  if (fd_ >= 0 && mode_ == Mode::kReplaceAtClose) {
    ::close(fd_);
    ::unlink(temporary_.c_str());
    return;
  }
  try {
    close();
  } catch (const std::exception&) {
    // Destructors must not throw; close() reports the error to callers that want it.
  }
}

std::string& StreamedFile::buffer() {
  if (fd_ < 0) fail(path_, "append after close");
  return buffer_;
}

void StreamedFile::appended() {
  if (buffer_.size() >= kFlushBytes) flush();
}

void StreamedFile::flush() {
  if (buffer_.empty() || fd_ < 0) return;
  if (error_number_ != 0) {
    lines_lost_ += static_cast<uint64_t>(std::count(buffer_.begin(), buffer_.end(), '\n'));
  } else {
    size_t written = 0;
    if (const int error = write_all(fd_, buffer_, written); error != 0) {
      fail_write(error, written);
    } else {
      bytes_written_ += buffer_.size();
      lines_written_ += static_cast<uint64_t>(std::count(buffer_.begin(), buffer_.end(), '\n'));
    }
  }
  buffer_.clear();  // keeps the capacity
}

void StreamedFile::fail_write(int error_number, size_t written) {
  error_number_ = error_number;
  // Only whole lines stay: a reader of the file never meets a row cut short.
  const auto written_end = buffer_.begin() + static_cast<std::ptrdiff_t>(written);
  const auto last_newline =
      std::find(std::make_reverse_iterator(written_end), buffer_.rend(), '\n');
  const auto whole_end = last_newline.base();
  const uint64_t whole_bytes = static_cast<uint64_t>(whole_end - buffer_.begin());
  if (whole_bytes < written) {
    // Best effort: the file system that refused a write may refuse this too.
    (void)::ftruncate(fd_, static_cast<off_t>(bytes_written_ + whole_bytes));
  }
  bytes_written_ += whole_bytes;
  lines_written_ += static_cast<uint64_t>(std::count(buffer_.begin(), whole_end, '\n'));
  lines_lost_ += static_cast<uint64_t>(std::count(whole_end, buffer_.end(), '\n'));
}

void StreamedFile::close() {
  if (fd_ < 0) return;
  flush();
  const int fd = fd_;
  fd_ = -1;
  if (mode_ == Mode::kReplaceAtClose) {
    if (error_number_ != 0) {
      ::close(fd);
      ::unlink(temporary_.c_str());
      fail(path_, fmt::format("cannot write: {}; not written", std::strerror(error_number_)));
    }
    if (std::string problem = publish(fd, temporary_, path_); !problem.empty()) {
      fail(path_, problem + "; not written");
    }
    return;
  }
  if (const int error = close_reporting(fd); error != 0 && error_number_ == 0) {
    error_number_ = error;
  }
  if (error_number_ != 0) {
    fail(path_, fmt::format("cannot write: {}; the file holds its first {} lines, whole, and {} "
                            "more were not written",
                            std::strerror(error_number_), lines_written_, lines_lost_));
  }
}

}  // namespace etwire::outputs

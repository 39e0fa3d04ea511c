#include "runner/results_lock.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <iostream>

#include "runner/exit_codes.h"

namespace etwire::runner {

ResultsLock::~ResultsLock() {
  release();
}

bool ResultsLock::take(const std::filesystem::path& dir, std::string& why) {
  release();
  const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) {
    why = fmt::format("{}: cannot open the results directory: {}", dir.string(),
                      std::strerror(errno));
    return false;
  }
  if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
    const int error = errno;
    ::close(fd);
    why = error == EWOULDBLOCK
              ? fmt::format(
                    "{}: another etwire run is writing its results there; give this one "
                    "another --out",
                    dir.string())
              : fmt::format("{}: cannot lock the results directory: {}", dir.string(),
                            std::strerror(error));
    return false;
  }
  fd_ = fd;
  return true;
}

void ResultsLock::release() {
  if (fd_ < 0) return;
  ::close(fd_);  // closing the last descriptor drops the lock
  fd_ = -1;
}

int hold_results_directory(const std::filesystem::path& dir, ResultsLock& lock) {
  std::error_code error;
  std::filesystem::create_directories(dir, error);
  if (error) {
    std::cerr << fmt::format("error: {}: cannot create the results directory: {}\n", dir.string(),
                             error.message());
    return kExitFailure;
  }
  std::string why;
  if (!lock.take(dir, why)) {
    std::cerr << fmt::format("error: {}\n", why);
    return kExitBadInput;
  }
  return kExitOk;
}

}  // namespace etwire::runner

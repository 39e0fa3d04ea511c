#include "common/output_path.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace etwire {

bool written_through(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && !S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode);
}

int open_output_path(const std::string& path, mode_t mode) {
  if (written_through(path)) return ::open(path.c_str(), O_WRONLY | O_TRUNC | O_CLOEXEC);
  struct stat st {};
  if (::lstat(path.c_str(), &st) == 0 && (S_ISLNK(st.st_mode) || S_ISREG(st.st_mode))) {
    ::unlink(path.c_str());
  }
  return ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, mode);
}

}  // namespace etwire

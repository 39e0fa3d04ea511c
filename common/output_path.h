// Opening a file etwire writes where a user pointed it (a results directory, a capture folder):
// a device or a FIFO named there (/dev/stdout, /dev/null) is written through; anything else is a
// new file of this process's, so that a symbolic link planted where the file goes never sends
// the write elsewhere and an earlier file's mode is never kept.
#pragma once

#include <sys/types.h>

#include <string>

namespace etwire {

// Whether `path` names a device or a FIFO, directly or through a symbolic link.
bool written_through(const std::string& path);

// Opens `path` to write: a device or a FIFO as it is (truncated); otherwise a link or a regular
// file at `path` is removed and a new file is created with `mode` (under the umask), never through
// a link. Returns the descriptor (close-on-exec), or -1 with errno set.
int open_output_path(const std::string& path, mode_t mode);

}  // namespace etwire

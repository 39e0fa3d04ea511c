#include "tests/fuzz/fuzz_support.h"

#include <sys/mman.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <string>

#include "trace/node.h"

namespace etwire::fuzz {

namespace {

// A file in memory keeps the disk out of the loop (millions of inputs) and leaves no temporary
// files behind when a run is stopped.
struct MemoryFile {
  int fd = -1;
  std::string path;

  MemoryFile() {
    fd = memfd_create("etwire-fuzz-input", MFD_CLOEXEC);
    if (fd < 0) {
      std::perror("memfd_create");
      std::abort();
    }
    path = "/proc/self/fd/" + std::to_string(fd);
  }
};

}  // namespace

const std::string& input_as_file(const uint8_t* data, size_t size) {
  static MemoryFile file;
  if (ftruncate(file.fd, 0) != 0) std::abort();
  size_t written = 0;
  while (written < size) {
    ssize_t n = pwrite(file.fd, data + written, size - written, static_cast<off_t>(written));
    if (n <= 0) std::abort();
    written += static_cast<size_t>(n);
  }
  return file.path;
}

void read_all_nodes(trace::NodeSource& source) {
  // Far more nodes than an input of -max_len bytes can hold, unless a reader makes nodes out of
  // nothing: that would show as a timeout.
  constexpr size_t kMaxNodes = 1'000'000;
  trace::TraceNode node;
  volatile size_t sink = source.metadata().attrs.size() + source.metadata().version.size();
  for (size_t i = 0; i < kMaxNodes && source.next(node); ++i) {
    sink = sink + node.name.size() + node.attrs.size() + node.data_deps.size() +
           node.ctrl_deps.size() + (node.carries_traffic() ? 1 : 0);
  }
  (void)sink;
}

}  // namespace etwire::fuzz

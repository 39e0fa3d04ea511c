// Preloaded into etwire by stop_signals_e2e_test.py (case before_libraries): a shared library's
// static initialiser, as DPDK's and protobuf's are, that writes to $ETWIRE_STOP_PROBE whether
// SIGTERM already has its handler when it runs ("caught") or not ("default").
#include <fcntl.h>
#include <unistd.h>

#include <csignal>
#include <cstdlib>
#include <cstring>

namespace {

__attribute__((constructor)) void report_sigterm_disposition() {
  const char* path = std::getenv("ETWIRE_STOP_PROBE");
  if (path == nullptr) return;
  struct sigaction current {};
  if (sigaction(SIGTERM, nullptr, &current) != 0) return;
  const bool caught = current.sa_handler != SIG_DFL && current.sa_handler != SIG_IGN;
  const char* text = caught ? "caught\n" : "default\n";
  const int fd = ::open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0) return;
  if (::write(fd, text, std::strlen(text)) < 0) {
    // Nothing to do: the test reads an empty file as a failure.
  }
  ::close(fd);
}

}  // namespace

#include "nic/dpdk/runtime_dir.h"

#include <rte_eal.h>

#include <cstdlib>
#include <filesystem>
#include <mutex>
#include <string>
#include <system_error>

namespace etwire::nic::dpdk {

namespace {

std::string runtime_dir;  // set once, read at exit

void remove_runtime_dir() {
  // Best effort at exit: a file that cannot go stays, as it would have without this.
  std::error_code error;
  std::filesystem::remove_all(runtime_dir, error);
}

}  // namespace

void remove_runtime_dir_at_exit(const std::string& prefix) {
  static std::once_flag once;
  std::call_once(once, [&prefix] {
    const char* dir = rte_eal_get_runtime_dir();
    if (dir == nullptr || prefix.empty() ||
        std::filesystem::path(dir).filename().string() != prefix) {
      return;
    }
    runtime_dir = dir;
    std::atexit(remove_runtime_dir);
  });
}

}  // namespace etwire::nic::dpdk

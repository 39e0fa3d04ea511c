#include "nic/dpdk/eal.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <rte_eal.h>
#include <rte_errno.h>

#include <mutex>
#include <optional>
#include <stdexcept>

#include "common/cpu_set.h"

namespace etwire::nic::dpdk {

namespace {

std::mutex eal_mutex;
std::optional<std::vector<std::string>> eal_args;  // what the EAL was started with
std::vector<unsigned> process_cpus;                // the caller's CPUs before rte_eal_init

}  // namespace

void start_eal(const std::vector<std::string>& args) {
  std::lock_guard lock(eal_mutex);
  if (eal_args) {
    if (*eal_args == args) return;
    throw std::runtime_error(fmt::format(
        "DPDK's EAL already runs in this process with other arguments ({}); it cannot be "
        "initialised twice",
        fmt::join(*eal_args, " ")));
  }
  // rte_eal_init may reorder argv; it gets copies.
  std::vector<std::string> storage;
  storage.reserve(args.size() + 1);
  storage.emplace_back("etwire");
  storage.insert(storage.end(), args.begin(), args.end());
  std::vector<char*> argv;
  argv.reserve(storage.size() + 1);
  for (std::string& arg : storage) argv.push_back(arg.data());
  argv.push_back(nullptr);
  const std::vector<unsigned> before = calling_thread_cpus();
  if (rte_eal_init(static_cast<int>(storage.size()), argv.data()) < 0) {
    throw std::runtime_error(fmt::format("DPDK's EAL did not start with arguments \"{}\": {}",
                                         fmt::join(args, " "), rte_strerror(rte_errno)));
  }
  eal_args = args;
  process_cpus = before;
}

bool eal_started() {
  std::lock_guard lock(eal_mutex);
  return eal_args.has_value();
}

std::vector<unsigned> cpus_before_eal() {
  std::lock_guard lock(eal_mutex);
  return process_cpus;
}

}  // namespace etwire::nic::dpdk

// Where a thread of the process that is not an lcore should run: on the CPUs the process may use
// that no EAL lcore is pinned to. Threads started after rte_eal_init inherit the main lcore's CPU,
// and a busy-polling lcore starves them there (the capture writer lost most of a run's frames
// that way while the machine's other core idled). DPDK's own control threads are placed the
// same way; this one also says when there is no such CPU, so that the caller can tell the user.
#pragma once

#include <string>
#include <vector>

namespace etwire::nic::dpdk {

struct CpusBesideLcores {
  std::vector<unsigned> cpus;        // where to run; never empty once the EAL runs
  std::vector<unsigned> lcore_cpus;  // the CPUs of the EAL's lcores
  // True when every CPU the process may use has an lcore: `cpus` are then all of them, shared.
  bool shared = false;
};

// After start_eal(): the process's CPUs at EAL start minus the enabled lcores' CPUs.
CpusBesideLcores cpus_beside_lcores();

// "0-1,3": CPU numbers as ranges, for messages.
std::string cpu_list(const std::vector<unsigned>& cpus);

}  // namespace etwire::nic::dpdk

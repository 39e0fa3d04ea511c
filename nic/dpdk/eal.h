// The DPDK environment abstraction layer is process-wide and can be initialised once per
// process: every DPDK port of a run shares it. The calling thread becomes DPDK's main lcore.
#pragma once

#include <string>
#include <vector>

namespace etwire::nic::dpdk {

// Initialises the EAL with `args` (without the program name) unless it already runs with the
// same arguments. Throws std::runtime_error with DPDK's reason when initialisation fails, or when
// the EAL already runs with other arguments (it cannot be initialised twice in one process).
void start_eal(const std::vector<std::string>& args);

bool eal_started();

// The CPUs the process could run on when the EAL started (rte_eal_init pins the calling thread
// to the main lcore's, and threads it starts afterwards inherit that); empty before.
std::vector<unsigned> cpus_before_eal();

}  // namespace etwire::nic::dpdk

// CPU numbers as lists: what a cpu_set_t holds, and where the calling thread may run.
#pragma once

#include <sched.h>

#include <vector>

namespace etwire {

// The CPUs in `set`, in increasing order.
std::vector<unsigned> cpus_in(const cpu_set_t& set);

// The CPUs the calling thread may run on (its affinity); empty when it cannot be read.
std::vector<unsigned> calling_thread_cpus();

}  // namespace etwire

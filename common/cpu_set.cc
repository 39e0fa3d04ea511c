#include "common/cpu_set.h"

namespace etwire {

std::vector<unsigned> cpus_in(const cpu_set_t& set) {
  std::vector<unsigned> cpus;
  for (unsigned cpu = 0; cpu < CPU_SETSIZE; ++cpu) {
    if (CPU_ISSET(cpu, &set)) cpus.push_back(cpu);
  }
  return cpus;
}

std::vector<unsigned> calling_thread_cpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof(set), &set) != 0) return {};
  return cpus_in(set);
}

}  // namespace etwire

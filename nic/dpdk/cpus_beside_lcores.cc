#include "nic/dpdk/cpus_beside_lcores.h"

#include <fmt/format.h>
#include <rte_lcore.h>

#include <algorithm>
#include <set>

#include "common/cpu_set.h"
#include "nic/dpdk/eal.h"

namespace etwire::nic::dpdk {

CpusBesideLcores cpus_beside_lcores() {
  std::set<unsigned> taken;
  unsigned lcore = 0;
  RTE_LCORE_FOREACH(lcore) {
    for (const unsigned cpu : cpus_in(rte_lcore_cpuset(lcore))) taken.insert(cpu);
  }
  CpusBesideLcores result;
  result.lcore_cpus.assign(taken.begin(), taken.end());
  const std::vector<unsigned> all = cpus_before_eal();
  std::copy_if(all.begin(), all.end(), std::back_inserter(result.cpus),
               [&](unsigned cpu) { return taken.count(cpu) == 0; });
  if (result.cpus.empty()) {
    result.cpus = all;
    result.shared = true;
  }
  return result;
}

std::string cpu_list(const std::vector<unsigned>& cpus) {
  std::string text;
  for (size_t i = 0; i < cpus.size();) {
    size_t j = i;
    while (j + 1 < cpus.size() && cpus[j + 1] == cpus[j] + 1) ++j;
    if (!text.empty()) text += ",";
    text += j == i ? fmt::format("{}", cpus[i]) : fmt::format("{}-{}", cpus[i], cpus[j]);
    i = j + 1;
  }
  return text;
}

}  // namespace etwire::nic::dpdk

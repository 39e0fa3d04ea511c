#include "collectives/hosts.h"

#include <algorithm>
#include <map>

namespace etwire::collectives {

GroupHosts group_hosts(std::span<const int32_t> ranks, HostGrouping hosts) {
  std::map<int64_t, std::vector<uint32_t>> by_host;
  for (uint32_t p = 0; p < ranks.size(); ++p) by_host[hosts.host(ranks[p])].push_back(p);
  GroupHosts out;
  out.members.reserve(by_host.size());
  out.host_of.resize(ranks.size());
  for (auto& [host, members] : by_host) {
    std::sort(members.begin(), members.end(), [&](uint32_t a, uint32_t b) {
      return hosts.local_index(ranks[a]) < hosts.local_index(ranks[b]);
    });
    for (uint32_t p : members) out.host_of[p] = out.count();
    out.members.push_back(std::move(members));
  }
  return out;
}

}  // namespace etwire::collectives

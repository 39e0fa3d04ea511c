// Ranks grouped into hosts: host h holds global ranks h*H .. h*H + H-1, and a rank's local index
// is its slot on the host (its GPU, hence its rail: the NIC port of the same index on every host
// hangs off the same leaf switch in a rail-optimised fabric).
#pragma once

#include <cstdint>
#include <span>
#include <vector>

namespace etwire::collectives {

struct HostGrouping {
  uint32_t ranks_per_host = 1;
  int64_t host(int32_t rank) const { return rank / static_cast<int64_t>(ranks_per_host); }
  uint32_t local_index(int32_t rank) const { return static_cast<uint32_t>(rank % ranks_per_host); }
  bool same_host(int32_t a, int32_t b) const { return host(a) == host(b); }
};

// A process group's members (positions) by host: the hosts its ranks occupy in ascending order,
// each host's members in local-index order, and the index of each member's host in that list.
struct GroupHosts {
  std::vector<std::vector<uint32_t>> members;  // [host index] -> positions
  std::vector<uint32_t> host_of;               // [position] -> host index
  uint32_t count() const { return static_cast<uint32_t>(members.size()); }
};
GroupHosts group_hosts(std::span<const int32_t> ranks, HostGrouping hosts);

}  // namespace etwire::collectives

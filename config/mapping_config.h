// `mapping:` — how each job's trace ranks land on ports, which ranks share a host (a scale-up
// domain whose traffic stays off the wire), and how per-rank addresses derive from the port.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "config/server_topology.h"

namespace etwire::config {

enum class Placement : uint8_t {
  kBlock,       // consecutive ranks fill a port, then the next: ranks_per_port per port
  kRoundRobin,  // rank r goes to ports[r % ports]
  kExplicit,    // rank_ports[r] names the port of rank r
  // Host-major, rail by local index: the ports form servers of fabric.rails.nics_per_host
  // consecutive ports (hosts.ranks_per_host without rails); host h's ranks go to server h, the
  // rank with local index i to its NIC i, so that rank i of every host is on rail i.
  kRail,
};
// "block", "round-robin", "explicit", "rail"
std::string_view placement_name(Placement placement);

// Scale-up domains: hosts hold `ranks_per_host` consecutive ranks (host = rank / ranks_per_host),
// as in an 8-GPU server. Traffic between ranks of one host goes over the emulated local
// interconnect at `bandwidth_bps`, not over the ports.
struct HostsConfig {
  uint32_t ranks_per_host = 1;  // 1 = every rank is its own host: all traffic is on the wire
  uint64_t bandwidth_bps = 0;   // per direction per rank; required when ranks_per_host > 1
  uint64_t latency_ns = 0;
  // The servers' topology as NCCL dumps it (`topology`, read from topology_file): rail placement
  // puts the rank on GPU k on the NIC nearest to GPU k instead of on NIC k.
  std::string topology_file;
  std::shared_ptr<const ServerTopology> topology;
};

struct JobMapping {
  std::string job;       // the workload job this maps
  std::string key_path;  // "mapping.jobs[0]", or "mapping" when the job took the default
  Placement placement = Placement::kBlock;
  std::vector<std::string> ports;  // ports used, in order; empty in the file = every port
  // Ranks per port: block fills this many per port (default: ranks spread evenly); round-robin
  // and explicit treat it as a capacity limit when set.
  std::optional<uint32_t> ranks_per_port;
  std::vector<std::string> rank_ports;  // explicit: the port of each rank, by rank
  HostsConfig hosts;
};

// Whether ranks sharing a port also share its addresses or get their own (port address + k for
// the k-th rank on the port, counting ranks of every job on the port in job then rank order).
enum class AddressSharing : uint8_t { kShared, kPerRank };
std::string_view address_sharing_name(AddressSharing sharing);  // "shared", "per-rank"

struct AddressingConfig {
  AddressSharing ip = AddressSharing::kShared;
  AddressSharing mac = AddressSharing::kShared;
  // Where each port's QP numbers start on the wire, unless the port gives its own (0 and 1 are
  // special in RoCE); the run numbers start here too (control/plan/qp_numbering.h).
  uint32_t qpn_base = 256;
  // UDP source ports, one per QP, cycling through [base, base + count): the ECMP entropy.
  uint16_t udp_source_port_base = 49152;
  uint32_t udp_source_port_count = 16384;
};

struct MappingConfig {
  AddressingConfig addressing;
  std::vector<JobMapping> jobs;  // one per workload job, in workload order (defaults filled in)
};

}  // namespace etwire::config

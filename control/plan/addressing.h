// Per-rank addresses derived from the ports: IP and MAC (shared with the port, or the port's
// address + k for the k-th rank on it) and UDP source ports. The rules are deterministic and
// documented in docs/configuration.md ("Addressing"):
//
//  - Ranks on a port are numbered 0, 1, ... in job order, then rank order: their slot.
//  - QP numbers come from the traffic the run opens (qp_numbering.h): each port numbers its own
//    on the wire, as an RNIC does; a run number keeps each unique in the run.
//  - A QP's UDP source port is udp_source_port_base + (run number mod udp_source_port_count):
//    each QP of a rank pair gets its own ECMP entropy.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "config/addresses.h"
#include "config/run_config.h"
#include "control/load/diagnostic.h"
#include "control/load/source_map.h"
#include "control/plan/rank_mapping.h"

namespace etwire::control {

inline constexpr uint32_t kQpnLimit = 1u << 24;  // QP numbers are 24 bits on the wire
// Run numbers (qp_numbering.h) are 32 bits; the largest is kept as the data planes' "no QP".
inline constexpr uint64_t kRunQpnLimit = 0xFFFFFFFFull;

struct RankEndpoint {
  size_t port = 0;    // index into config::RunConfig::ports
  uint32_t slot = 0;  // index among the ranks on the port, every job counted
  int64_t host = 0;
  config::MacAddress mac;
  config::Ipv4Address ipv4;
  std::optional<config::Ipv6Address> ipv6;
};

// QP numbers first .. first + count - 1 (a port's, a rank's, run or wire: qp_numbering.h).
struct PortQpnRange {
  uint32_t first = 0;
  uint32_t count = 0;  // 0 for none
};

class AddressPlan {
 public:
  // A rank's endpoint, or a CollNet aggregation node's (participant rank world_size + k: its twin
  // host, host -1).
  const RankEndpoint& endpoint(size_t job, int32_t rank) const {
    return jobs_[job][static_cast<size_t>(rank)];
  }
  // Every participant of a job: its ranks, then any aggregation nodes.
  const std::vector<RankEndpoint>& job(size_t job) const { return jobs_[job]; }
  size_t jobs() const { return jobs_.size(); }

  uint16_t udp_source_port(uint32_t qpn) const;

 private:
  friend AddressPlan assign_addresses(const config::RunConfig&, const std::vector<JobPlacement>&,
                                      const SourceMap&, Diagnostics&);
  std::vector<std::vector<RankEndpoint>> jobs_;
  uint16_t udp_base_ = 49152;
  uint32_t udp_count_ = 16384;
};

// Assigns every rank of every placed job its addresses. `placements` is indexed like the
// workload's jobs. Reports addresses used twice (a per-rank address landing on another port's
// address).
AddressPlan assign_addresses(const config::RunConfig& config,
                             const std::vector<JobPlacement>& placements, const SourceMap& where,
                             Diagnostics& out);

}  // namespace etwire::control

// What a program puts on the wire: bytes per participant and flows per (source, destination, QP).
#pragma once

#include <cstdint>
#include <vector>

#include "collectives/program.h"

namespace etwire::collectives {

struct MemberTraffic {
  uint64_t sends = 0;  // send chunk operations (one per QP piece and chunk), local copies included
  uint64_t recvs = 0;  // receive chunk operations, local copies included
  uint64_t bytes_sent = 0;          // to other members
  uint64_t network_bytes_sent = 0;  // to members on other hosts (what crosses the NIC)
  uint64_t bytes_received = 0;      // from other members
};

// One entry per program held (members', then any aggregation nodes'), in program order.
// ranks_per_host as in CollectiveSpec.
std::vector<MemberTraffic> member_traffic(const CollectiveProgram& program,
                                          uint32_t ranks_per_host);

// Sends aggregated per (src, dst, qp) in member positions, sorted by (src, dst, qp). src == dst is
// a local copy.
struct Flow {
  uint32_t src = 0;
  uint32_t dst = 0;
  uint16_t qp = 0;
  uint64_t operations = 0;  // send chunk operations: the per-chunk transfers on this QP
  uint64_t bytes = 0;
};
std::vector<Flow> flows(const CollectiveProgram& program);
// Sorts `flows` by (src, dst, qp) and adds up those with the same three, in place.
void merge_flows(std::vector<Flow>& flows);

}  // namespace etwire::collectives

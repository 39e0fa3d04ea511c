// `auto` in collectives.algorithms and collectives.protocol: the algorithm and protocol NCCL's
// tuner would pick for one collective, from a cost model of its kind (docs/collectives.md, "The
// auto tuner"): per algorithm and protocol, a latency (a base, and per step a hop inside the
// server or across the network) plus the bytes over a bandwidth (the channels' NICs or the
// server's interconnect, cut by the protocol's share of it and its caps), the smallest time
// winning. The figures are those of NCCL 2.23's model for H100 servers (NVSwitch, so NVLS) with
// x86 hosts. NCCL chooses between tree, ring, NVLS and NVLS-tree for an all-reduce and between ring
// and PAT for an all-gather or reduce-scatter (and NVLS on one server, which etwire builds for the
// all-reduce only, and CollNet, which it does not build); the ring and the tree run every protocol,
// the rest Simple only, and every other collective and algorithm runs Simple.
#pragma once

#include <array>
#include <cstdint>
#include <span>

#include "collectives/collective_spec.h"
#include "config/protocol.h"

namespace etwire::collectives {

// The links a collective's ranks use.
struct TunerLinks {
  double nic_bytes_per_second = 0;   // a rank's port
  double host_bytes_per_second = 0;  // a rank's share of its host's interconnect (NVLink)
  // The NICs (ports) a rank's server has: where collectives.channels is unset, the ring family
  // and the tree run a channel per NIC, as NCCL opens at least one per NIC.
  uint32_t nics_per_server = 1;
};

struct ProtocolChoice {
  config::Protocol protocol = config::Protocol::kSimple;
  // The model's time per protocol (by config::Protocol), in microseconds; negative: not a
  // candidate for this collective and algorithm.
  std::array<double, config::kProtocolCount> time_us{-1, -1, -1};
};

// The algorithms NCCL's tuner weighs for `type`, in its order (a tie keeps the first): tree,
// ring, NVLS and NVLS-tree for all-reduce, ring and PAT for all-gather and reduce-scatter; none
// for the others (NCCL has one algorithm for them).
std::span<const Algorithm> tuner_algorithms(trace::CollectiveType type);

// How a group sits on servers as NCCL's model sees it: servers are the hosts its members occupy
// (counted where consecutive members change host: exact for groups in rank order, as trace
// groups are), and each holds ranks / servers of them. A walk over the group: worked out once
// when several candidates are weighed for it.
struct GroupShape {
  uint32_t ranks = 0;
  uint32_t per_server = 0;
  uint32_t servers = 0;
};
GroupShape group_shape(const CollectiveSpec& spec);

// `spec` has its algorithm and channels chosen (control/plan/collective_choice.h). The protocol
// is the fastest of those the algorithm runs; every time is negative where NCCL would not run the
// algorithm on this group (NVLS across servers, NVLS-tree on one, PAT with several ranks on a
// server), and then the protocol is Simple. `shape` is group_shape(spec).
ProtocolChoice tune_protocol(const CollectiveSpec& spec, const TunerLinks& links);
ProtocolChoice tune_protocol(const CollectiveSpec& spec, const TunerLinks& links,
                             const GroupShape& shape);

}  // namespace etwire::collectives

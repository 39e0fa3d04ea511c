// `collectives.protocol: auto`: the protocol NCCL's tuner would pick for one collective, from a
// cost model of its kind (docs/collectives.md, "Protocols", "The auto tuner"): per protocol, a
// latency (a base, and per step a hop inside the server or across the network) plus the bytes
// over a bandwidth (the channels' NIC bandwidth, cut by the protocol's share of it and its caps),
// the smallest time winning. The figures are those of NCCL 2.23's model for H100 servers with
// x86 hosts; only the ring and tree all-reduce and the ring all-gather and reduce-scatter have a
// choice: every other collective and algorithm runs Simple, as NCCL runs its other algorithms.
#pragma once

#include <array>
#include <cstdint>

#include "collectives/collective_spec.h"
#include "config/protocol.h"

namespace etwire::collectives {

// The links a collective's ranks use.
struct TunerLinks {
  double nic_bytes_per_second = 0;   // a rank's port
  double host_bytes_per_second = 0;  // a rank's share of its host's interconnect (NVLink)
};

struct ProtocolChoice {
  config::Protocol protocol = config::Protocol::kSimple;
  // The model's time per protocol (by config::Protocol), in microseconds; negative: not a
  // candidate for this collective and algorithm.
  std::array<double, config::kProtocolCount> time_us{-1, -1, -1};
};

// `spec` has its algorithm and channels chosen (control/plan/collective_choice.h).
ProtocolChoice tune_protocol(const CollectiveSpec& spec, const TunerLinks& links);

}  // namespace etwire::collectives

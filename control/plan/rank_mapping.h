// Where each trace rank of a job sits: its port (by placement: block, round-robin or explicit)
// and its host (scale-up domain). Deterministic: the same config and world size always give the
// same placement.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "config/run_config.h"
#include "control/load/diagnostic.h"
#include "control/load/source_map.h"

namespace etwire::control {

struct JobPlacement {
  std::string job;
  int32_t world_size = 0;
  std::vector<size_t> port_of_rank;  // index into config::RunConfig::ports, by rank
  uint32_t ranks_per_host = 1;
  // CollNet: the twin hosts (twin::aggregation_hosts, after the run's ports) of the job's
  // aggregation nodes. Node k takes part in the job's collectives as participant rank
  // world_size + k, which no trace has; empty when the job's all-reduce is not CollNet.
  std::vector<size_t> aggregator_ports;

  bool is_aggregator(int32_t rank) const { return rank >= world_size; }
  // The twin host of a participant: a rank's port, or an aggregation node's host.
  size_t port(int32_t rank) const {
    return is_aggregator(rank) ? aggregator_ports[static_cast<size_t>(rank - world_size)]
                               : port_of_rank[static_cast<size_t>(rank)];
  }
  int64_t host(int32_t rank) const { return rank / static_cast<int64_t>(ranks_per_host); }
  // Whether two ranks share a host (an aggregation node shares none).
  bool same_host(int32_t a, int32_t b) const {
    return !is_aggregator(a) && !is_aggregator(b) && host(a) == host(b);
  }
};

// Places `world_size` ranks of `mapping`'s job. Problems (ports that do not exist, more ranks
// than the placement holds, an explicit list of the wrong length) go to `out`, located through
// `where`; nullopt when the job cannot be placed.
std::optional<JobPlacement> place_ranks(const config::RunConfig& config,
                                        const config::JobMapping& mapping, int32_t world_size,
                                        const SourceMap& where, Diagnostics& out);

}  // namespace etwire::control

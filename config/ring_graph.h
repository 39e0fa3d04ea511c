// Ring channels as NCCL lays them out on a server, read from the graph NCCL dumps
// (NCCL_GRAPH_DUMP_FILE, docs/collectives.md "NCCL's graph"): per channel, the server's GPUs by
// local index in ring order, and the NICs the ring enters and leaves the server by.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

namespace etwire::config {

struct RingGraphChannel {
  std::vector<uint32_t> gpus;       // local indices, each once, in ring order
  std::optional<uint32_t> net_in;   // the NIC (by local index) the ring enters the server by
  std::optional<uint32_t> net_out;  // and leaves it by
};

struct RingGraph {
  std::vector<RingGraphChannel> channels;
};

}  // namespace etwire::config

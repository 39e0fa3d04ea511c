// Reads the ring channels out of the XML graph dump NCCL writes with NCCL_GRAPH_DUMP_FILE
// (docs/collectives.md, "NCCL's graph"): <graphs> holding one <graph> per algorithm, the ring's
// with id 0 and pattern 4, whose <channel>s each list an optional <net dev>, the server's
// <gpu dev>s in ring order, and an optional closing <net dev>. Device numbers are decimal or
// 0x-hexadecimal; NCCL's multi-node NVLink systems put a system id above bit 56, which is dropped.
#pragma once

#include <string>

#include "config/ring_graph.h"
#include "control/load/nccl_dump_error.h"

namespace etwire::control {

// Throws NcclDumpError, an unreadable or oversized file included.
config::RingGraph read_nccl_ring_graph(const std::string& path);
// The same from the file's text; `name` stands for the file in messages.
config::RingGraph parse_nccl_ring_graph(std::string text, const std::string& name);

}  // namespace etwire::control

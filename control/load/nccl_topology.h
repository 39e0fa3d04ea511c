// Reads the topology NCCL dumps with NCCL_TOPO_DUMP_FILE (docs/collectives.md, "A server's
// topology"): <system> holding <cpu>s, under them a tree of <pci> bridges and switches, the GPUs
// as <gpu dev> and the NICs as <nic><net dev name>. Each GPU gets the NIC whose place in the
// tree is nearest to it (the deepest common ancestor); among NICs equally near, the one fewer
// GPUs have so far, then the lowest numbered, so GPUs spread over the NICs they share a switch
// with. GPUs and NICs must be numbered 0..n-1, each once.
#pragma once

#include <string>

#include "config/server_topology.h"
#include "control/load/nccl_dump_error.h"

namespace etwire::control {

// Throws NcclDumpError, an unreadable or oversized file included.
config::ServerTopology read_nccl_topology(const std::string& path);
// The same from the file's text; `name` stands for the file in messages.
config::ServerTopology parse_nccl_topology(std::string text, const std::string& name);

}  // namespace etwire::control

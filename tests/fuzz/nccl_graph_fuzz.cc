// The readers of NCCL's XML dumps: the graph (collectives.graph) and the topology
// (mapping.jobs[].hosts.topology), each given the input. NcclDumpError is how they refuse bad
// input; anything else escaping, or a dump they accept that breaks their own promises, is a
// finding.
#include <cstddef>
#include <cstdint>
#include <string>

#include "control/load/nccl_graph.h"
#include "control/load/nccl_topology.h"

namespace {

void read_graph(const std::string& text) {
  using namespace etwire;
  try {
    const config::RingGraph graph = control::parse_nccl_ring_graph(text, "fuzz.xml");
    if (graph.channels.empty()) __builtin_trap();
    const size_t gpus = graph.channels.front().gpus.size();
    for (const config::RingGraphChannel& channel : graph.channels) {
      // Every channel goes through GPUs 0..gpus-1, each once.
      if (channel.gpus.size() != gpus) __builtin_trap();
      std::string seen(gpus, '\0');
      for (uint32_t gpu : channel.gpus) {
        if (gpu >= gpus || seen[gpu] != 0) __builtin_trap();
        seen[gpu] = 1;
      }
    }
  } catch (const control::NcclDumpError&) {
  }
}

void read_topology(const std::string& text) {
  using namespace etwire;
  try {
    const config::ServerTopology topology = control::parse_nccl_topology(text, "fuzz.xml");
    // Every GPU has a NIC of the server, and where it meets it.
    if (topology.gpus() == 0 || topology.nics() == 0) __builtin_trap();
    if (topology.path_of_gpu.size() != topology.gpus()) __builtin_trap();
    for (uint32_t nic : topology.nic_of_gpu) {
      if (nic >= topology.nics()) __builtin_trap();
    }
  } catch (const control::NcclDumpError&) {
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  read_graph(text);
  read_topology(text);
  return 0;
}

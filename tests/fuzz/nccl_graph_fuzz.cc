// The reader of NCCL's graph dumps (collectives.graph). NcclGraphError is how it refuses bad input;
// anything else escaping, or a graph it accepts that breaks its own promises, is a finding.
#include <cstddef>
#include <cstdint>
#include <string>

#include "control/load/nccl_graph.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace etwire;
  try {
    const config::RingGraph graph = control::parse_nccl_ring_graph(
        std::string(reinterpret_cast<const char*>(data), size), "fuzz.xml");
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
  } catch (const control::NcclGraphError&) {
  }
  return 0;
}

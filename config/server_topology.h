// A server as the topology NCCL dumps describes it (NCCL_TOPO_DUMP_FILE, docs/collectives.md, "A
// server's topology"): its GPUs and NICs by device number, and for each GPU the NIC nearest to it
// on the server's PCI tree, which its rank's traffic leaves by.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace etwire::config {

// Where a GPU and its NIC meet: the nearer, the fewer links between them.
enum class TopologyPath : uint8_t {
  kPciSwitch,  // under one PCIe switch (NCCL's PIX or PXB)
  kCpu,        // under one CPU's host bridge (PHB)
  kSystem,     // on different CPUs (SYS)
};

struct ServerTopology {
  std::vector<uint32_t> nic_of_gpu;       // [GPU dev] -> the NIC's net dev
  std::vector<TopologyPath> path_of_gpu;  // [GPU dev] -> where it meets its NIC
  std::vector<std::string> nic_names;     // [net dev] -> its name ("mlx5_0")

  uint32_t gpus() const { return static_cast<uint32_t>(nic_of_gpu.size()); }
  uint32_t nics() const { return static_cast<uint32_t>(nic_names.size()); }
  // GPU k on NIC k for every k, as rail placement has it without a topology.
  bool is_identity() const {
    for (uint32_t g = 0; g < gpus(); ++g) {
      if (nic_of_gpu[g] != g) return false;
    }
    return gpus() == nics();
  }
};

}  // namespace etwire::config

#include "control/load/nccl_topology.h"

#include <fmt/format.h>

#include <algorithm>
#include <optional>
#include <string_view>
#include <utility>
#include <vector>

#include "control/load/nccl_xml.h"

namespace etwire::control {

namespace {

constexpr uint64_t kMaxTopologyBytes = 16 << 20;  // a server's dump is some 10 KiB
constexpr uint32_t kMaxDevices = 1024;
// A PCI tree is a few levels deep; deeper nesting is not a topology (and bounds the paths kept).
constexpr size_t kMaxDepth = 64;

// A device and the elements above it, from <system> down.
struct Placed {
  uint32_t dev = 0;
  std::vector<pugi::xml_node> path;
  pugi::xml_node node;
};

class TopologyReader {
 public:
  TopologyReader(std::string name, std::string text) : xml_(std::move(name), std::move(text)) {}

  config::ServerTopology read() {
    const pugi::xml_node system = xml_.document().child("system");
    if (!system) {
      xml_.fail(0, "no <system> element: not a topology NCCL dumped (NCCL_TOPO_DUMP_FILE)");
    }
    collect(system);
    check_numbering(gpus_, "<gpu>", "GPU");
    check_numbering(nics_, "<net>", "NIC");
    if (gpus_.empty()) xml_.fail(system, "no <gpu>: the topology has no GPU to place");
    if (nics_.empty()) {
      xml_.fail(system, "no <net> (a NIC): the topology has nothing to place the GPUs' ranks on");
    }
    config::ServerTopology out;
    out.nic_names.resize(nics_.size());
    for (const Placed& nic : nics_) out.nic_names[nic.dev] = nic.node.attribute("name").value();
    assign(out);
    return out;
  }

 private:
  // Every <gpu> and <net> with its ancestors, without recursion (a dump nests a few levels;
  // a hostile one is refused past kMaxDepth).
  void collect(const pugi::xml_node system) {
    std::vector<pugi::xml_node> path{system};
    std::vector<pugi::xml_node> next{system.first_child()};
    while (!next.empty()) {
      pugi::xml_node node = next.back();
      if (!node) {
        next.pop_back();
        path.pop_back();
        if (!next.empty()) next.back() = next.back().next_sibling();
        continue;
      }
      if (node.type() != pugi::node_element) {
        next.back() = node.next_sibling();
        continue;
      }
      const std::string_view name = node.name();
      if (name == "gpu") gpus_.push_back({xml_.device(node, kMaxDevices), path, node});
      if (name == "net") nics_.push_back({xml_.device(node, kMaxDevices), path, node});
      if (path.size() >= kMaxDepth) {
        xml_.fail(node, fmt::format("nested more than {} elements deep: not a server's PCI tree",
                                    kMaxDepth));
      }
      path.push_back(node);
      next.push_back(node.first_child());
    }
  }

  void check_numbering(std::vector<Placed>& devices, const char* element, const char* what) {
    std::sort(devices.begin(), devices.end(),
              [](const Placed& a, const Placed& b) { return a.dev < b.dev; });
    for (size_t i = 0; i < devices.size(); ++i) {
      if (devices[i].dev == i) continue;
      if (i > 0 && devices[i].dev == devices[i - 1].dev) {
        xml_.fail(devices[i].node, fmt::format("{} {} appears twice", what, devices[i].dev));
      }
      xml_.fail(devices[i].node,
                fmt::format("{} dev {} without {} {}: a server's {}s are numbered 0..n-1", element,
                            devices[i].dev, what, i, what));
    }
  }

  static size_t shared_depth(const Placed& a, const Placed& b) {
    size_t depth = 0;
    while (depth < a.path.size() && depth < b.path.size() && a.path[depth] == b.path[depth]) {
      ++depth;
    }
    return depth;
  }

  static config::TopologyPath path_type(const pugi::xml_node meeting) {
    const std::string_view name = meeting.name();
    if (name == "pci") return config::TopologyPath::kPciSwitch;
    if (name == "cpu") return config::TopologyPath::kCpu;
    return config::TopologyPath::kSystem;
  }

  void assign(config::ServerTopology& out) {
    std::vector<uint32_t> load(nics_.size(), 0);
    for (const Placed& gpu : gpus_) {
      size_t best_depth = 0;
      std::optional<uint32_t> best;
      for (const Placed& nic : nics_) {
        const size_t depth = shared_depth(gpu, nic);
        if (!best || depth > best_depth || (depth == best_depth && load[nic.dev] < load[*best])) {
          best = nic.dev;
          best_depth = depth;
        }
      }
      ++load[*best];
      out.nic_of_gpu.push_back(*best);
      out.path_of_gpu.push_back(path_type(gpu.path[best_depth - 1]));
    }
  }

  NcclXmlReader xml_;
  std::vector<Placed> gpus_;
  std::vector<Placed> nics_;
};

}  // namespace

config::ServerTopology read_nccl_topology(const std::string& path) {
  return parse_nccl_topology(read_nccl_dump(path, kMaxTopologyBytes, "an NCCL topology"), path);
}

config::ServerTopology parse_nccl_topology(std::string text, const std::string& name) {
  return TopologyReader(name, std::move(text)).read();
}

}  // namespace etwire::control

#include "control/load/nccl_graph.h"

#include <fmt/format.h>

#include <optional>
#include <string_view>
#include <utility>
#include <vector>

#include "control/load/nccl_xml.h"

namespace etwire::control {

namespace {

constexpr uint64_t kMaxGraphBytes = 16 << 20;  // a dump of 64 channels x 72 GPUs is ~100 KiB
constexpr int kRingGraphId = 0;                // NCCL numbers its graphs ring 0, tree 1, ...
constexpr int kRingPattern = 4;
constexpr uint32_t kMaxGpus = 1024;

class GraphReader {
 public:
  GraphReader(std::string path, std::string text) : xml_(std::move(path), std::move(text)) {}

  config::RingGraph read() {
    const pugi::xml_node graphs = xml_.document().child("graphs");
    if (!graphs)
      xml_.fail(0, "no <graphs> element: not a graph NCCL dumped (NCCL_GRAPH_DUMP_FILE)");
    const pugi::xml_node ring = find_ring(graphs);
    config::RingGraph out;
    for (const pugi::xml_node channel : ring.children("channel"))
      out.channels.push_back(read_channel(channel));
    if (out.channels.empty()) xml_.fail(ring, "the ring graph has no <channel>");
    const size_t gpus = out.channels.front().gpus.size();
    for (size_t c = 1; c < out.channels.size(); ++c) {
      if (out.channels[c].gpus.size() != gpus) {
        xml_.fail(ring,
                  fmt::format("channel {} lists {} GPUs, channel 0 {}: every channel goes through "
                              "every GPU of the server",
                              c, out.channels[c].gpus.size(), gpus));
      }
    }
    return out;
  }

 private:
  pugi::xml_node find_ring(const pugi::xml_node graphs) {
    for (const pugi::xml_node graph : graphs.children("graph")) {
      const pugi::xml_attribute id = graph.attribute("id");
      const pugi::xml_attribute pattern = graph.attribute("pattern");
      if ((id && id.as_int(-1) == kRingGraphId) || (pattern && pattern.as_int() == kRingPattern)) {
        return graph;
      }
    }
    xml_.fail(graphs, "no ring graph (a <graph> with id=\"0\" or pattern=\"4\")");
  }

  config::RingGraphChannel read_channel(const pugi::xml_node channel) {
    config::RingGraphChannel out;
    std::vector<bool> seen;
    for (const pugi::xml_node node : channel.children()) {
      const std::string_view name = node.name();
      if (name == "gpu") {
        const uint32_t dev = xml_.device(node, kMaxGpus);
        if (dev >= seen.size()) seen.resize(dev + 1, false);
        if (seen[dev]) xml_.fail(node, fmt::format("GPU {} appears twice in one channel", dev));
        seen[dev] = true;
        out.gpus.push_back(dev);
      } else if (name == "net") {
        (out.gpus.empty() ? out.net_in : out.net_out) = xml_.device(node, kMaxGpus);
      } else if (node.type() == pugi::node_element) {
        xml_.fail(node, fmt::format("<{}> in a <channel>: expected <net> and <gpu>", name));
      }
    }
    if (out.gpus.empty()) xml_.fail(channel, "a <channel> without a <gpu>");
    for (uint32_t g = 0; g < out.gpus.size(); ++g) {
      if (g >= seen.size() || !seen[g]) {
        xml_.fail(channel,
                  fmt::format("the channel lists {} GPUs but not GPU {}: a ring goes through "
                              "GPUs 0..{} of the server, each once",
                              out.gpus.size(), g, out.gpus.size() - 1));
      }
    }
    return out;
  }

  NcclXmlReader xml_;
};

}  // namespace

config::RingGraph read_nccl_ring_graph(const std::string& path) {
  return parse_nccl_ring_graph(read_nccl_dump(path, kMaxGraphBytes, "an NCCL graph"), path);
}

config::RingGraph parse_nccl_ring_graph(std::string text, const std::string& name) {
  return GraphReader(name, std::move(text)).read();
}

}  // namespace etwire::control

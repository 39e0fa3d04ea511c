#include "control/load/nccl_graph.h"

#include <fmt/format.h>
#include <pugixml.hpp>

#include <algorithm>
#include <charconv>
#include <optional>
#include <string_view>
#include <utility>

#include "common/bounded_file.h"

namespace etwire::control {

namespace {

constexpr uint64_t kMaxGraphBytes = 16 << 20;  // a dump of 64 channels x 72 GPUs is ~100 KiB
constexpr int kRingGraphId = 0;                // NCCL numbers its graphs ring 0, tree 1, ...
constexpr int kRingPattern = 4;
constexpr uint32_t kMaxGpus = 1024;
constexpr uint64_t kDeviceBits = (uint64_t{1} << 56) - 1;  // below NCCL's system id

class GraphReader {
 public:
  GraphReader(std::string path, std::string text)
      : path_(std::move(path)), text_(std::move(text)) {}

  config::RingGraph read() {
    pugi::xml_document doc;
    const pugi::xml_parse_result parsed = doc.load_buffer(text_.data(), text_.size());
    if (!parsed) fail(static_cast<size_t>(parsed.offset), parsed.description());
    const pugi::xml_node graphs = doc.child("graphs");
    if (!graphs) fail(0, "no <graphs> element: not a graph NCCL dumped (NCCL_GRAPH_DUMP_FILE)");
    const pugi::xml_node ring = find_ring(graphs);
    config::RingGraph out;
    for (const pugi::xml_node channel : ring.children("channel"))
      out.channels.push_back(read_channel(channel));
    if (out.channels.empty()) fail(ring, "the ring graph has no <channel>");
    const size_t gpus = out.channels.front().gpus.size();
    for (size_t c = 1; c < out.channels.size(); ++c) {
      if (out.channels[c].gpus.size() != gpus) {
        fail(ring, fmt::format("channel {} lists {} GPUs, channel 0 {}: every channel goes through "
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
    fail(graphs, "no ring graph (a <graph> with id=\"0\" or pattern=\"4\")");
  }

  config::RingGraphChannel read_channel(const pugi::xml_node channel) {
    config::RingGraphChannel out;
    std::vector<bool> seen;
    for (const pugi::xml_node node : channel.children()) {
      const std::string_view name = node.name();
      if (name == "gpu") {
        const uint32_t dev = device(node);
        if (dev >= seen.size()) seen.resize(dev + 1, false);
        if (seen[dev]) fail(node, fmt::format("GPU {} appears twice in one channel", dev));
        seen[dev] = true;
        out.gpus.push_back(dev);
      } else if (name == "net") {
        (out.gpus.empty() ? out.net_in : out.net_out) = device(node);
      } else if (node.type() == pugi::node_element) {
        fail(node, fmt::format("<{}> in a <channel>: expected <net> and <gpu>", name));
      }
    }
    if (out.gpus.empty()) fail(channel, "a <channel> without a <gpu>");
    for (uint32_t g = 0; g < out.gpus.size(); ++g) {
      if (g >= seen.size() || !seen[g]) {
        fail(channel, fmt::format("the channel lists {} GPUs but not GPU {}: a ring goes through "
                                  "GPUs 0..{} of the server, each once",
                                  out.gpus.size(), g, out.gpus.size() - 1));
      }
    }
    return out;
  }

  uint32_t device(const pugi::xml_node node) {
    const pugi::xml_attribute attr = node.attribute("dev");
    if (!attr) fail(node, fmt::format("<{}> without a dev attribute", node.name()));
    std::string_view text = attr.value();
    int base = 10;
    if (text.starts_with("0x") || text.starts_with("0X")) {
      text.remove_prefix(2);
      base = 16;
    }
    uint64_t value = 0;
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value, base);
    if (ec != std::errc() || end != text.data() + text.size() || text.empty()) {
      fail(node, fmt::format("dev=\"{}\" is not a device number", attr.value()));
    }
    value &= kDeviceBits;
    if (value >= kMaxGpus) fail(node, fmt::format("dev {} is past {} devices", value, kMaxGpus));
    return static_cast<uint32_t>(value);
  }

  [[noreturn]] void fail(const pugi::xml_node node, const std::string& message) {
    fail(static_cast<size_t>(std::max<ptrdiff_t>(node.offset_debug(), 0)), message);
  }
  [[noreturn]] void fail(size_t offset, const std::string& message) {
    const size_t line =
        1 + static_cast<size_t>(std::count(
                text_.begin(),
                text_.begin() + static_cast<ptrdiff_t>(std::min(offset, text_.size())), '\n'));
    throw NcclGraphError(fmt::format("{}:{}: {}", path_, line, message));
  }

  std::string path_;
  std::string text_;
};

}  // namespace

config::RingGraph read_nccl_ring_graph(const std::string& path) {
  std::string text;
  try {
    text = read_bounded_file(path, kMaxGraphBytes, "an NCCL graph");
  } catch (const InputFileError& e) {
    throw NcclGraphError(fmt::format("{}: {}", path, e.what()));
  }
  return parse_nccl_ring_graph(std::move(text), path);
}

config::RingGraph parse_nccl_ring_graph(std::string text, const std::string& name) {
  return GraphReader(name, std::move(text)).read();
}

}  // namespace etwire::control

#include <fmt/format.h>

#include "collectives/collective_spec.h"
#include "config/enum_names.h"
#include "control/load/nccl_graph.h"
#include "control/load/section_parsers.h"

namespace etwire::control {

namespace {

// "ALL_REDUCE" -> "all_reduce": collective types as config keys.
std::string collective_key(trace::CollectiveType type) {
  std::string key(trace::collective_type_name(type));
  for (char& c : key) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return key;
}

void parse_algorithms(MapReader& section, config::CollectivesConfig& out) {
  DocumentContext& ctx = section.context();
  for (int t = 0; t < trace::kCollectiveTypeCount; ++t) {
    auto type = static_cast<trace::CollectiveType>(t);
    std::string key = collective_key(type);
    std::string text;
    if (!section.text(key, text)) continue;
    std::vector<std::string> applicable;
    for (auto algorithm : collectives::applicable_algorithms(type)) {
      applicable.emplace_back(collectives::algorithm_name(algorithm));
    }
    auto algorithm = collectives::parse_algorithm(text);
    if (!algorithm || !collectives::is_applicable(*algorithm, type)) {
      report_bad_name(ctx, section.get(key), section.key_path(key), applicable,
                      fmt::format("an algorithm for {}: ", trace::collective_type_name(type)));
      continue;
    }
    out.algorithms[static_cast<size_t>(t)] = *algorithm;
  }
  section.finish();
}

}  // namespace

namespace {

// collectives.graph: the ring channels of an NCCL graph dump.
void read_graph(MapReader& section, const std::string& config_dir, config::CollectivesConfig& out) {
  std::string text;
  if (!section.text("graph", text) || text.empty()) return;
  DocumentContext& ctx = section.context();
  out.graph_file = resolve_config_path(ctx, section.key_path("graph"), text, config_dir);
  try {
    out.ring_graph =
        std::make_shared<const config::RingGraph>(read_nccl_ring_graph(out.graph_file));
  } catch (const NcclGraphError& e) {
    ctx.error(Problem::kBadValue, section.get("graph"), section.key_path("graph"), e.what());
  }
}

}  // namespace

void parse_collectives(MapReader& section, const std::string& config_dir,
                       config::CollectivesConfig& out) {
  DocumentContext& ctx = section.context();
  MapReader algorithms = section.section("algorithms");
  parse_algorithms(algorithms, out);
  bool chunks = section.integer("chunks", out.chunks, 1, collectives::kMaxChunks);
  uint64_t chunk_bytes = 0;
  if (section.bytes("chunk_size", chunk_bytes, 1, UINT64_MAX)) {
    out.chunk_bytes = chunk_bytes;
    if (chunks) {
      ctx.error(Problem::kInconsistent, section.get("chunk_size"), section.key_path("chunk_size"),
                "give either chunks (a count) or chunk_size (bytes per chunk), not both");
    }
  }
  section.integer("qps_per_peer", out.qps_per_peer, 1, collectives::kMaxQps);
  if (uint32_t channels = 1; section.integer("channels", channels, 1, collectives::kMaxChannels)) {
    out.channels = channels;
  }
  section.bytes("qp_alignment", out.qp_alignment, 1, 1 << 20);
  section.bytes("max_message_size", out.max_message_bytes, 256, 1ull << 31);
  section.bytes("barrier_size", out.barrier_bytes, 1, 1 << 20);
  section.choice("hierarchy", out.hierarchy, config::hierarchy_names());
  read_graph(section, config_dir, out);
  section.finish();
}

}  // namespace etwire::control

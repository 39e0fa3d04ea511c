#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>

#include "collectives/collective_spec.h"
#include "collectives/tuner.h"
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
    const bool tunable = !collectives::tuner_algorithms(type).empty();
    if (text == "auto" && tunable) {
      out.tuned_algorithms[static_cast<size_t>(t)] = true;
      continue;
    }
    std::vector<std::string> applicable;
    for (auto algorithm : collectives::applicable_algorithms(type)) {
      applicable.emplace_back(collectives::algorithm_name(algorithm));
    }
    if (tunable) applicable.emplace_back("auto");
    if (text == "auto") {
      ctx.error(Problem::kBadValue, section.get(key), section.key_path(key),
                fmt::format("auto: NCCL's tuner chooses an algorithm for all_reduce, all_gather "
                            "and reduce_scatter only; {} runs one of: {}",
                            key, fmt::join(applicable, ", ")));
      continue;
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
  out.ring_graph = read_nccl_dump_key<config::RingGraph>(section, "graph", config_dir,
                                                         out.graph_file, read_nccl_ring_graph);
  if (!out.ring_graph) return;
  DocumentContext& ctx = section.context();
  const size_t channels = out.ring_graph->channels.size();
  if (out.channels == 0u) {
    ctx.error(Problem::kInconsistent, section.get("channels"), section.key_path("channels"),
              fmt::format("channels: 0 lays one ring in group order, but graph ({}) lays its "
                          "rings as NCCL did; give a count of its channels or leave it unset",
                          out.graph_file));
  }
  if (!out.channels && channels > collectives::kMaxChannels) {
    ctx.error(Problem::kOutOfRange, section.get("graph"), section.key_path("graph"),
              fmt::format("{}: {} ring channels, more than the {} a collective runs; set "
                          "channels to run that many of them",
                          out.graph_file, channels, collectives::kMaxChannels));
  }
}

// Whether the section holds `key`, without declaring it (so that the schema does not offer it).
bool holds(MapReader& section, const char* key) {
  const YAML::Node& map = section.node();
  return map.IsMap() && map[key];
}

// collectives.protocol and the buffers it cuts messages from: each buffer must hold a line of
// its protocol per slot.
void read_protocol(MapReader& section, config::ProtocolConfig& out) {
  DocumentContext& ctx = section.context();
  if (auto choice = config::ProtocolChoice::kSimple;
      section.choice("protocol", choice, config::protocol_choice_names())) {
    out.automatic = choice == config::ProtocolChoice::kAuto;
    if (!out.automatic) out.protocol = static_cast<config::Protocol>(choice);
  }
  section.integer("slots", out.slots, 1, 4096);
  if (section.integer("slice_slots", out.slice_slots, 1, 4096) && out.slice_slots > out.slots) {
    ctx.error(Problem::kInconsistent, section.get("slice_slots"), section.key_path("slice_slots"),
              fmt::format("a slice of {} slots is more than the buffer's {} slots", out.slice_slots,
                          out.slots));
  }
  constexpr const char* kBufferKeys[] = {"buffer_size", "ll_buffer_size", "ll128_buffer_size"};
  bool given[config::kProtocolCount] = {};
  for (int p = 0; p < config::kProtocolCount; ++p) {
    given[p] =
        section.bytes(kBufferKeys[p], out.buffer_bytes[static_cast<size_t>(p)], 1, 1ull << 31);
  }
  // Every buffer, given or not, must leave a slot room for a line (and a message 256 bytes).
  for (int p = 0; p < config::kProtocolCount; ++p) {
    const auto protocol = static_cast<config::Protocol>(p);
    const uint64_t line = std::max<uint64_t>(config::protocol_line(protocol).bytes, 256);
    if (out.buffer(protocol) / out.slots >= line) continue;
    const char* key = given[p] ? kBufferKeys[p] : "slots";
    ctx.error(Problem::kOutOfRange, section.get(key), section.key_path(key),
              fmt::format("{}'s buffer of {} bytes cut into {} slots leaves less than {} bytes "
                          "per slot",
                          config::name_of(config::protocol_names(), protocol), out.buffer(protocol),
                          out.slots, line));
  }
  if (holds(section, "max_message_size")) {
    ctx.error(Problem::kUnknownKey, section.get("max_message_size"),
              section.key_path("max_message_size"),
              "max_message_size was replaced by the protocol's buffers: a Simple message is "
              "slice_slots of the slots of buffer_size (2 of 8 of 4MiB = 1MiB by default)");
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
  if (uint32_t channels = 0; section.integer("channels", channels, 0, collectives::kMaxChannels)) {
    out.channels = channels;
  }
  section.bytes("qp_alignment", out.qp_alignment, 1, 1 << 20);
  read_protocol(section, out.protocol);
  section.bytes("barrier_size", out.barrier_bytes, 1, 1 << 20);
  section.choice("hierarchy", out.hierarchy, config::hierarchy_names());
  read_graph(section, config_dir, out);
  section.finish();
}

}  // namespace etwire::control

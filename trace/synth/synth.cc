#include "trace/synth/synth.h"

#include <fmt/format.h>

#include <algorithm>
#include <random>
#include <stdexcept>

#include "trace/synth/node_builder.h"

namespace etwire::synth {

using trace::CollectiveType;
using trace::NodeType;
using trace::TraceNode;

trace::TraceMetadata synth_metadata(const std::string& description) {
  trace::TraceMetadata meta;
  meta.version = "0.0.4";
  auto& attr = meta.attrs.append();
  attr.name = "generator";
  attr.kind = trace::AttrKind::kString;
  attr.text = "etwire synth " + description;
  return meta;
}

namespace {

std::string lower(std::string_view text) {
  std::string out(text);
  std::transform(out.begin(), out.end(), out.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

// Writes a node immediately, or, with a shuffle window, collects `window` nodes and writes them
// in a seeded random order so that children can land before their parents.
class ShufflingSink {
 public:
  ShufflingSink(trace::TraceWriter& writer, uint32_t window, uint64_t seed)
      : writer_(writer), window_(window), rng_(seed) {
    pending_.reserve(window);
  }

  void put(const TraceNode& node) {
    if (window_ <= 1) {
      writer_.write(node);
      return;
    }
    pending_.push_back(node);
    if (pending_.size() == window_) drain();
  }

  void drain() {
    std::shuffle(pending_.begin(), pending_.end(), rng_);
    for (const auto& node : pending_) writer_.write(node);
    pending_.clear();
  }

 private:
  trace::TraceWriter& writer_;
  uint32_t window_;
  std::mt19937_64 rng_;
  std::vector<TraceNode> pending_;
};

}  // namespace

std::string rank_file_path(const std::string& prefix, int32_t rank, WriteFormat format) {
  switch (format) {
    case WriteFormat::kBinary:
      return fmt::format("{}.{}.et", prefix, rank);
    case WriteFormat::kBinaryGzip:
      return fmt::format("{}.{}.et.gz", prefix, rank);
    case WriteFormat::kFeederJson:
      return fmt::format("{}.{}.json", prefix, rank);
  }
  return {};
}

std::vector<std::string> write_microbench(const MicrobenchSpec& spec, const std::string& prefix,
                                          WriteFormat format) {
  if (spec.ranks < 1) throw std::invalid_argument("ranks must be at least 1");
  if (spec.iterations < 1) throw std::invalid_argument("iterations must be at least 1");
  if (!spec.collective && spec.ranks < 2) {
    throw std::invalid_argument("a send/recv ring needs at least 2 ranks");
  }
  const std::string kind =
      spec.collective ? lower(trace::collective_type_name(*spec.collective)) : "send_recv";
  const std::string description =
      fmt::format("microbench {} bytes={} ranks={} iterations={} compute_us={}", kind, spec.bytes,
                  spec.ranks, spec.iterations, spec.compute_us);

  std::vector<std::string> paths;
  TraceNode node;
  for (int32_t rank = 0; rank < spec.ranks; ++rank) {
    std::string path = rank_file_path(prefix, rank, format);
    auto writer = trace::open_trace_writer(path, format, synth_metadata(description));
    uint64_t next_id = 1;
    // The nodes the next step depends on: the previous step's comm node(s).
    std::vector<uint64_t> previous;
    for (uint32_t iter = 0; iter < spec.iterations; ++iter) {
      if (spec.compute_us > 0) {
        start_node(node, next_id++, NodeType::kComp, fmt::format("compute.{}", iter));
        node.duration_us = spec.compute_us;
        node.data_deps = previous;
        writer->write(node);
        previous = {node.id};
      }
      if (spec.collective) {
        start_node(node, next_id++, NodeType::kCommColl, fmt::format("{}.{}", kind, iter));
        make_collective(node, *spec.collective, spec.bytes, spec.pg_name);
        if (!spec.involved_dim.empty()) add_bool_list_attr(node, "involved_dim", spec.involved_dim);
        node.data_deps = previous;
        writer->write(node);
        previous = {node.id};
      } else {
        const int32_t next = (rank + 1) % spec.ranks;
        const int32_t prev = (rank + spec.ranks - 1) % spec.ranks;
        const auto tag = static_cast<int32_t>(iter);
        start_node(node, next_id++, NodeType::kCommSend, fmt::format("send.{}", iter));
        make_send(node, rank, next, spec.bytes, tag);
        node.data_deps = previous;
        writer->write(node);
        const uint64_t send_id = node.id;
        start_node(node, next_id++, NodeType::kCommRecv, fmt::format("recv.{}", iter));
        make_recv(node, rank, prev, spec.bytes, tag);
        node.data_deps = previous;
        writer->write(node);
        previous = {send_id, node.id};
      }
    }
    writer->close();
    paths.push_back(std::move(path));
  }
  return paths;
}

std::vector<std::string> write_graph(const GraphSpec& spec, const std::string& prefix,
                                     WriteFormat format) {
  if (spec.ranks < 1) throw std::invalid_argument("ranks must be at least 1");
  if (spec.nodes_per_rank < 1) throw std::invalid_argument("nodes per rank must be at least 1");
  if (spec.fan_out < 1) throw std::invalid_argument("fan-out must be at least 1");
  const std::string description =
      fmt::format("graph nodes={} ranks={} fan_out={} shuffle_window={} seed={}",
                  spec.nodes_per_rank, spec.ranks, spec.fan_out, spec.shuffle_window, spec.seed);
  const bool p2p_hubs = spec.ranks > 1;

  std::vector<std::string> paths;
  TraceNode node;
  for (int32_t rank = 0; rank < spec.ranks; ++rank) {
    std::string path = rank_file_path(prefix, rank, format);
    auto writer = trace::open_trace_writer(path, format, synth_metadata(description));
    ShufflingSink sink(*writer, spec.shuffle_window, spec.seed + static_cast<uint64_t>(rank));
    uint64_t written = 0;
    uint64_t next_id = 1;
    uint64_t block = 0;
    std::vector<uint64_t> block_inputs;  // the previous block's fan-in node
    std::vector<uint64_t> hub_ids;
    auto emit = [&]() {
      sink.put(node);
      ++written;
    };
    while (written < spec.nodes_per_rank) {
      hub_ids.clear();
      if (p2p_hubs && block % 5 == 4 && spec.nodes_per_rank - written >= 2) {
        const int32_t next = (rank + 1) % spec.ranks;
        const int32_t prev = (rank + spec.ranks - 1) % spec.ranks;
        const auto tag = static_cast<int32_t>(block % 1000000);
        start_node(node, next_id++, NodeType::kCommSend, "send");
        make_send(node, rank, next, spec.p2p_bytes, tag);
        node.data_deps = block_inputs;
        hub_ids.push_back(node.id);
        emit();
        start_node(node, next_id++, NodeType::kCommRecv, "recv");
        make_recv(node, rank, prev, spec.p2p_bytes, tag);
        node.data_deps = block_inputs;
        hub_ids.push_back(node.id);
        emit();
      } else {
        start_node(node, next_id++, NodeType::kCommColl, "all_reduce");
        make_collective(node, CollectiveType::kAllReduce, spec.hub_bytes, std::string("0"));
        node.data_deps = block_inputs;
        hub_ids.push_back(node.id);
        emit();
      }
      std::vector<uint64_t> fan_ids;
      for (uint32_t i = 0; i < spec.fan_out && written < spec.nodes_per_rank; ++i) {
        start_node(node, next_id++, NodeType::kComp, "compute");
        node.duration_us = spec.compute_us;
        node.data_deps = hub_ids;
        fan_ids.push_back(node.id);
        emit();
      }
      if (written < spec.nodes_per_rank) {
        start_node(node, next_id++, NodeType::kComp, "join");
        node.duration_us = spec.compute_us;
        node.data_deps = fan_ids;
        emit();
        block_inputs = {node.id};
      }
      ++block;
    }
    sink.drain();
    writer->close();
    paths.push_back(std::move(path));
  }
  return paths;
}

}  // namespace etwire::synth

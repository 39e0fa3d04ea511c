// In-memory node sources for feeder tests: a vector of nodes, or a function that makes the node at
// each position (for traces too long to hold twice). Both number records as a binary trace does:
// record 0 is the metadata, so the node at position i is record i + 1.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "trace/node.h"
#include "trace/node_source.h"

namespace etwire::feeder::testing {

class VectorSource : public trace::NodeSource {
 public:
  explicit VectorSource(std::vector<trace::TraceNode> nodes, std::string path = "mem.0.et")
      : nodes_(std::move(nodes)), path_(std::move(path)) {}

  bool next(trace::TraceNode& out) override {
    if (position_ == nodes_.size()) return false;
    out = nodes_[position_];
    out.record_index = position_ + 1;
    ++position_;
    return true;
  }
  const trace::TraceMetadata& metadata() const override { return metadata_; }
  const std::string& path() const override { return path_; }

 private:
  std::vector<trace::TraceNode> nodes_;
  std::string path_;
  trace::TraceMetadata metadata_;
  size_t position_ = 0;
};

class GeneratedSource : public trace::NodeSource {
 public:
  // make(position, out) fills the node at `position` and returns false past the end.
  using Maker = std::function<bool(uint64_t position, trace::TraceNode& out)>;

  explicit GeneratedSource(Maker make, std::string path = "generated.0.et")
      : make_(std::move(make)), path_(std::move(path)) {}

  bool next(trace::TraceNode& out) override {
    out.reset();
    if (!make_(position_, out)) return false;
    out.record_index = position_ + 1;
    ++position_;
    return true;
  }
  const trace::TraceMetadata& metadata() const override { return metadata_; }
  const std::string& path() const override { return path_; }

 private:
  Maker make_;
  std::string path_;
  trace::TraceMetadata metadata_;
  uint64_t position_ = 0;
};

inline trace::TraceNode make_node(uint64_t id, std::vector<uint64_t> data_deps = {},
                                  trace::NodeType type = trace::NodeType::kComp,
                                  uint64_t start_time_us = 0) {
  trace::TraceNode node;
  node.id = id;
  node.name = std::to_string(id);
  node.name.insert(0, "node");
  node.type = type;
  node.data_deps = std::move(data_deps);
  node.start_time_us = start_time_us;
  return node;
}

inline std::unique_ptr<trace::NodeSource> source_of(std::vector<trace::TraceNode> nodes,
                                                    std::string path = "mem.0.et") {
  return std::make_unique<VectorSource>(std::move(nodes), std::move(path));
}

}  // namespace etwire::feeder::testing

// The dependency-aware feeder of one rank: reads the rank's nodes in windows, resolves data
// dependencies (including parents that appear later in the file), and hands out nodes whose
// parents have all completed, in an order chosen by a policy. Memory is proportional to the
// window, not to the trace.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "trace/feeder/node_filter.h"
#include "trace/feeder/policy.h"
#include "trace/node.h"
#include "trace/node_source.h"

namespace etwire::feeder {

// What to do with ctrl_deps. Data deps are always honoured.
enum class CtrlDeps : uint8_t {
  kIgnore,  // default: PyTorch ctrl_deps are caller/callee links, not ordering
  kHonour,  // treat like data deps; self-references and ids never found in the file are dropped
            // (counted in FeederStats), since converters are known to write them
};

struct FeederOptions {
  // Nodes held in memory (waiting, ready and in flight alike) before reading pauses; 0 counts as 1.
  // The window grows past this only when it must: when no node held is ready or in flight and
  // some wait for parents not read yet, reading goes on one node at a time until a node becomes
  // ready. So memory is bounded by the window plus what the file's forward references force, not
  // by the trace length.
  uint32_t window = 4096;
  Policy policy = Policy::kFifo;
  CtrlDeps ctrl_deps = CtrlDeps::kIgnore;
  NodeFilter filter;
};

struct FeederStats {
  uint64_t nodes_read = 0;
  uint64_t nodes_issued = 0;     // handed out by next()
  uint64_t nodes_filtered = 0;   // completed inside the feeder because the filter dropped them
  uint64_t nodes_completed = 0;  // issued and completed (filtered nodes not counted)
  uint64_t peak_live_nodes = 0;  // most nodes held at once
  uint64_t peak_unresolved = 0;  // most distinct not-yet-read parents waited on at once
  uint64_t ctrl_self_refs_dropped = 0;
  uint64_t ctrl_dangling_dropped = 0;
};

// A node handed out by next(); valid until it is passed to complete().
struct IssuedNode {
  uint32_t slot = 0;
  const trace::TraceNode* node = nullptr;
};

class Feeder {
 public:
  Feeder(std::unique_ptr<trace::NodeSource> source, FeederOptions options = {});
  ~Feeder();
  Feeder(const Feeder&) = delete;
  Feeder& operator=(const Feeder&) = delete;

  // The next ready node, reading more of the file as needed; nullopt when no node is ready now
  // (some are in flight) or when every node has been issued. Throws TraceError on bad input:
  // duplicate ids, a data dep on the node itself, a dependency cycle (naming the nodes in it),
  // data deps that never resolve (reported when the file ends). After a TraceError the feeder
  // must not be used further. Every node is issued exactly once; for a fixed policy and a fixed
  // sequence of next()/complete() calls the order is always the same.
  std::optional<IssuedNode> next();

  // Marks an issued node complete, making children whose last parent it was ready. Throws
  // std::logic_error for a node that is not in flight (never issued, or completed already).
  void complete(IssuedNode issued);

  // True when the file is exhausted and every node has been issued and completed. The end of the
  // file is noticed by next(): after the last completion, next() returns nullopt and done() turns
  // true.
  bool done() const;
  uint64_t in_flight() const;
  const FeederStats& stats() const;
  const trace::TraceMetadata& metadata() const;
  const std::string& path() const;

 private:
  class Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace etwire::feeder

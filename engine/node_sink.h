// Where the run engine streams the trace nodes that took time, as each completes (nodes.csv is
// one): compute nodes waiting out their duration and communication nodes from joining their
// collective to their part's end. Called for every such node of the run: keep append cheap.
#pragma once

#include <cstdint>

#include "clock/time.h"
#include "trace/node.h"

namespace etwire::engine {

struct NodeRow {
  uint32_t job = 0;
  int32_t rank = 0;
  uint32_t iteration = 0;                  // warm-up iterations counted from 0
  const trace::TraceNode* node = nullptr;  // valid during the call only
  int64_t instance = -1;  // the collective instance a communication node joined; -1 for compute
  clock::Nanos start = 0;
  clock::Nanos end = 0;
};

class NodeSink {
 public:
  virtual void append(const NodeRow& row) = 0;

 protected:
  ~NodeSink() = default;
};

}  // namespace etwire::engine

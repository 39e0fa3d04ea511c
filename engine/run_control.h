// What the parts of the run engine tell the run they belong to: a node in flight has completed
// (queued and settled after the current event, never inside it), or the run cannot go on.
#pragma once

#include <cstdint>
#include <string>

#include "engine/rank_runtime.h"
#include "trace/feeder/feeder.h"

namespace etwire::engine {

class RunControl {
 public:
  // Node `node` of the rank runtime `runtime` completed, after `activity`.
  virtual void complete_node(uint32_t runtime, feeder::IssuedNode node, NodeActivity activity) = 0;
  // Stops the run with status stuck and `diagnosis` (RunResults::diagnosis); the first one counts.
  virtual void stop_stuck(std::string diagnosis) = 0;

 protected:
  ~RunControl() = default;
};

}  // namespace etwire::engine

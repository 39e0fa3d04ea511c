// Command-line options shared by the commands that read a trace set: where it is, its comm
// groups, and how the feeder walks it.
#pragma once

#include <CLI/CLI.hpp>

#include <cstdint>
#include <memory>
#include <string>

#include "trace/feeder/feeder.h"
#include "trace/trace_set.h"

namespace etwire::cli {

struct TraceOptions {
  std::string spec;
  std::string comm_groups;
  int32_t world_size = 0;  // 0 = infer from the files
  uint32_t window = 4096;
  std::string policy = "fifo";
  bool honour_ctrl_deps = false;

  // Loads the set and attaches the comm groups. Throws trace::TraceError on bad input.
  trace::TraceSet load_set() const;
  feeder::FeederOptions feeder_options() const;
};

// Adds SPEC, --comm-groups, --world-size; with_feeder adds --window, --policy, --ctrl-deps.
void add_trace_options(CLI::App* cmd, const std::shared_ptr<TraceOptions>& opts, bool with_feeder);

}  // namespace etwire::cli

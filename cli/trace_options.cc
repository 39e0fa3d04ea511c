#include "cli/trace_options.h"

namespace etwire::cli {

trace::TraceSet TraceOptions::load_set() const {
  auto set = trace::TraceSet::discover(
      spec, world_size > 0 ? std::optional<int32_t>(world_size) : std::nullopt);
  if (!comm_groups.empty()) set.set_comm_groups(trace::CommGroups::load(comm_groups));
  return set;
}

feeder::FeederOptions TraceOptions::feeder_options() const {
  feeder::FeederOptions options;
  options.window = window;
  options.policy = *feeder::parse_policy(policy);  // validated by CLI11
  options.ctrl_deps = honour_ctrl_deps ? feeder::CtrlDeps::kHonour : feeder::CtrlDeps::kIgnore;
  return options;
}

void add_trace_options(CLI::App* cmd, const std::shared_ptr<TraceOptions>& opts, bool with_feeder) {
  cmd->add_option("trace", opts->spec,
                  "Trace set: a prefix (dir/name for dir/name.<rank>.et), a directory holding one "
                  "set, or a single .et/.et.gz/.json file")
      ->required();
  cmd->add_option("-g,--comm-groups", opts->comm_groups,
                  "Comm-group JSON mapping process-group ids to ranks ({\"1\": [0,1]})")
      ->check(CLI::ExistingFile);
  cmd->add_option("--world-size", opts->world_size,
                  "Expected number of ranks; an error if the set has a different number of files")
      ->check(CLI::PositiveNumber);
  if (!with_feeder) return;
  cmd->add_option("--window", opts->window,
                  "Nodes the feeder holds in memory per rank (extends while a parent is unread)")
      ->check(CLI::Range(1u, 1u << 30))
      ->capture_default_str();
  cmd->add_option("--policy", opts->policy,
                  "Order among ready nodes: fifo, start-time (recorded start), comm-first")
      ->check(CLI::IsMember({"fifo", "start-time", "comm-first"}))
      ->capture_default_str();
  cmd->add_flag(
      "--ctrl-deps", opts->honour_ctrl_deps,
      "Also honour ctrl_deps (self-references and ids missing from the file are dropped)");
}

}  // namespace etwire::cli

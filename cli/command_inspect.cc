// `etwire inspect`: what a trace set contains, and whether it is well formed.
#include <iostream>
#include <memory>

#include "cli/commands.h"
#include "cli/trace_options.h"
#include "runner/exit_codes.h"
#include "trace/inspect/trace_summary.h"

namespace etwire::cli {

CommandAction add_inspect_command(CLI::App& app) {
  auto opts = std::make_shared<TraceOptions>();
  auto json = std::make_shared<bool>(false);
  auto* cmd = app.add_subcommand(
      "inspect",
      "Summarise a trace set: world size; per rank the nodes, collectives and bytes by type, "
      "process groups and dependency depth; per process group its members and collectives. "
      "Reading the whole graph also validates it.");
  add_trace_options(cmd, opts, /*with_feeder=*/false);
  cmd->add_flag("--json", *json, "Print JSON instead of tables");
  return [opts, json]() -> int {
    auto set = opts->load_set();
    inspect::SummaryOptions options;
    options.feeder = opts->feeder_options();
    auto summary = inspect::summarize(set, options);
    if (*json) {
      std::cout << inspect::to_json(summary).dump(2) << "\n";
    } else {
      std::cout << inspect::to_text(summary);
    }
    return runner::kExitOk;
  };
}

}  // namespace etwire::cli

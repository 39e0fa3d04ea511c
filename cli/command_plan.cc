// `etwire plan`: the resolved run before it runs: where every rank sits and what its addresses
// and QP numbers are, which peers and QPs it connects, and from the trace and the collective
// programs, the bytes each port sends and receives per iteration and the busiest port.
#include <fmt/format.h>

#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "control/plan/plan_report.h"
#include "control/plan/run_plan.h"
#include "control/resolve/config_loader.h"
#include "runner/exit_codes.h"

namespace etwire::cli {

namespace {

struct PlanOptions {
  std::string config;
  std::vector<std::string> overrides;
  bool json = false;
};

}  // namespace

CommandAction add_plan_command(CLI::App& app) {
  auto opts = std::make_shared<PlanOptions>();
  auto* cmd = app.add_subcommand(
      "plan",
      "Show the resolved run: the rank -> port -> address table, peers and QPs per rank, and "
      "the bytes each port sends and receives per iteration (from the trace and the collective "
      "programs), with the busiest port. Validates first: exit 2 on any problem.");
  cmd->add_option("config", opts->config, "The run configuration (YAML)")->required();
  cmd->add_option("-s,--set", opts->overrides,
                  "Override a key: KEY.PATH=VALUE, e.g. collectives.qps_per_peer=4 (repeatable)")
      ->allow_extra_args(false);
  cmd->add_flag("--json", opts->json, "Print JSON instead of tables");
  return [opts]() -> int {
    control::LoadOptions options;
    options.overrides = opts->overrides;
    const control::RunPlan loaded = control::load_config_file(opts->config, options);
    std::cerr << loaded.diagnostics.to_text();
    if (!loaded.ok() || !loaded.addresses) {
      std::cerr << fmt::format("{}: invalid: {} error{}; no plan\n", opts->config,
                               loaded.diagnostics.error_count(),
                               loaded.diagnostics.error_count() == 1 ? "" : "s");
      return runner::kExitBadInput;
    }
    if (loaded.traffic_problems.has_errors() || !loaded.traffic) {
      std::cerr << loaded.traffic_problems.to_text();
      return runner::kExitBadInput;
    }
    const control::TrafficPlan& plan = *loaded.traffic;
    if (opts->json) {
      std::cout << control::plan_to_json(loaded, plan).dump(2) << "\n";
    } else {
      std::cout << control::plan_to_text(loaded, plan);
    }
    return runner::kExitOk;
  };
}

}  // namespace etwire::cli

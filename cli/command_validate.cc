// `etwire validate`: every check of a run configuration (schema, cross-checks, the trace sets
// against the mapping) without running anything. Exit 0 with a one-line summary, or 2 with every
// problem, each at file:line:col.
#include <fmt/format.h>

#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "cli/exit_codes.h"
#include "control/load/config_loader.h"
#include "control/plan/config_summary.h"
#include "dataplane/backends.h"

namespace etwire::cli {

namespace {

struct ValidateOptions {
  std::string config;
  std::vector<std::string> overrides;
  bool skip_traces = false;
};

}  // namespace

CommandAction add_validate_command(CLI::App& app) {
  auto opts = std::make_shared<ValidateOptions>();
  auto* cmd = app.add_subcommand(
      "validate",
      "Check a run configuration: every key against the schema, the sections against each "
      "other, backends' settings and limits, and each job's trace set against the rank mapping. "
      "Prints every problem with its file:line:col; exit 0 when valid, 2 when not.");
  cmd->add_option("config", opts->config, "The run configuration (YAML)")->required();
  cmd->add_option("-s,--set", opts->overrides,
                  "Override a key before checking: KEY.PATH=VALUE, e.g. ports[1].mtu=9000 or "
                  "transport.dcqcn.enabled=false (repeatable)")
      ->allow_extra_args(false);
  cmd->add_flag("--no-traces", opts->skip_traces,
                "Skip reading the trace sets (the checks that need them are not made)");
  return [opts]() -> int {
    control::LoadOptions options;
    options.overrides = opts->overrides;
    options.read_traces = !opts->skip_traces;
    auto loaded = control::load_config_file(opts->config, options);
    std::cerr << loaded.diagnostics.to_text();
    if (!loaded.ok()) {
      std::cerr << fmt::format(
          "{}: invalid: {} error{}, {} warning{}\n", opts->config, loaded.diagnostics.error_count(),
          loaded.diagnostics.error_count() == 1 ? "" : "s", loaded.diagnostics.warning_count(),
          loaded.diagnostics.warning_count() == 1 ? "" : "s");
      return kExitBadInput;
    }
    // What `run` refuses before the first packet, validate refuses too.
    if (auto refusal = dataplane::unbuilt_backend(loaded.config)) {
      std::cerr << fmt::format("error: {}\n{}: invalid: a port's backend is not built yet\n",
                               *refusal, opts->config);
      return kExitBadInput;
    }
    std::cout << fmt::format("OK {}: {}\n", opts->config, control::summarize_config(loaded));
    return kExitOk;
  };
}

}  // namespace etwire::cli

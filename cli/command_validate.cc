// `etwire validate`: every check of a run configuration (schema, cross-checks, the trace sets
// against the mapping) without running anything. Exit 0 with a one-line summary, or 2 with every
// problem, each at file:line:col. With --devices, it also sets the run's devices up as `run` does
// before its first packet (DPDK ports, RDMA devices and their ports, GIDs, DCQCN settings) and
// tears them down again.
#include <fmt/format.h>

#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "control/load/device_profile.h"
#include "control/plan/config_summary.h"
#include "control/resolve/config_loader.h"
#include "control/resolve/twin_prediction.h"
#include "runner/device_check.h"
#include "runner/emulator_processes.h"
#include "runner/exit_codes.h"
#include "runner/predicted_run.h"

namespace etwire::cli {

namespace {

struct ValidateOptions {
  std::string config;
  std::vector<std::string> overrides;
  std::string profile;
  bool skip_traces = false;
  bool devices = false;
};

// A lab's prediction as run --predict derives it, with the device profiles (the one the
// configuration names, then --profile's) before the command line's --set: its problems, if any,
// with exit 2. The lab's own plan is `lab`, loaded with `options`.
int check_profiled_prediction(const std::string& config, const std::string& profile,
                              const control::RunPlan& lab,
                              const std::vector<std::string>& flag_profile,
                              control::LoadOptions options) {
  std::optional<std::vector<std::string>> settings =
      runner::read_prediction_profile(lab, flag_profile);
  if (!settings) return runner::kExitBadInput;
  settings->insert(settings->end(), options.overrides.begin(), options.overrides.end());
  options.overrides = std::move(*settings);
  const control::RunPlan profiled = control::load_config_file(config, options);
  const control::RunPlan prediction =
      profiled.ok() ? control::derive_plan(profiled, control::twin_prediction(), options, &lab)
                    : profiled;
  if (prediction.ok()) return runner::kExitOk;
  for (const control::Diagnostic& d : prediction.diagnostics.items()) {
    if (d.severity == control::Severity::kError) {
      std::cerr << control::format_diagnostic(d) << "\n";
    }
  }
  std::cerr << fmt::format(
      "{}: its prediction is invalid with the device profile {}'s settings (they count as --set "
      "before the command line's)\n",
      config, profile);
  return runner::kExitBadInput;
}

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
  cmd->add_flag("--devices", opts->devices,
                "Also set the run's devices up and check them as `run` does before its first "
                "packet (DPDK ports; RDMA devices, port state, MTU, GID, DCQCN settings), then "
                "release them");
  cmd->add_option("--profile", opts->profile,
                  "Check with a device profile's settings applied before --set (and after those of "
                  "the one fabric.profile names), as run --predict --profile and replay --profile "
                  "apply them to the twin")
      ->check(CLI::ExistingFile);
  return [opts]() -> int {
    std::vector<std::string> flag_profile;
    if (!opts->profile.empty()) {
      try {
        flag_profile = control::read_device_profile(opts->profile);
      } catch (const control::DeviceProfileError& e) {
        std::cerr << "error: " << e.what() << "\n";
        return runner::kExitBadInput;
      }
    }
    control::LoadOptions options;
    options.overrides = opts->overrides;
    options.read_traces = !opts->skip_traces;
    auto loaded = control::load_config_file(opts->config, options);
    const std::string profile =
        opts->profile.empty() ? loaded.config.fabric.profile : opts->profile;
    // A run on the twin takes the profiles as its own model (the loader applied the named one);
    // a lab's ports stay as configured, and its prediction is checked with them below.
    const bool on_the_twin = control::all_ports_on_loopback(loaded);
    if (on_the_twin && !flag_profile.empty()) {
      options.overrides = flag_profile;
      options.overrides.insert(options.overrides.end(), opts->overrides.begin(),
                               opts->overrides.end());
      loaded = control::load_config_file(opts->config, options);
    }
    // Under an MPI launcher the processes also agree on what they loaded and measure their clocks.
    const cluster::Session& session = cluster::Session::current();
    if (const int code = runner::settle_loaded_config(
            session, opts->config, loaded, loaded.ok(),
            fmt::format(
                "{}: invalid: {} error{}, {} warning{}{}", opts->config,
                loaded.diagnostics.error_count(), loaded.diagnostics.error_count() == 1 ? "" : "s",
                loaded.diagnostics.warning_count(),
                loaded.diagnostics.warning_count() == 1 ? "" : "s",
                profile.empty() || !on_the_twin
                    ? ""
                    : fmt::format(" (the device profile {}'s settings count as --set before the "
                                  "command line's)",
                                  profile)));
        code != runner::kExitOk) {
      return code;
    }
    if (!on_the_twin && !profile.empty()) {
      if (const int code =
              check_profiled_prediction(opts->config, profile, loaded, flag_profile, options);
          code != runner::kExitOk) {
        return code;
      }
    }
    if (opts->devices) {
      if (const int code = runner::check_devices(session, loaded); code != runner::kExitOk) {
        std::cerr << fmt::format("{}: the devices failed the checks `run` makes\n", opts->config);
        return code;
      }
    }
    if (session.rank() == 0) {
      std::cout << fmt::format("OK {}: {}{}{}\n", opts->config, control::summarize_config(loaded),
                               on_the_twin || profile.empty()
                                   ? ""
                                   : fmt::format(", its prediction checked with the device "
                                                 "profile {}",
                                                 profile),
                               !session.mpi() ? ""
                               : runner::twin_spread_over(loaded.config, session.size())
                                   ? fmt::format(", checked by the {} processes the fabric twin "
                                                 "is spread over",
                                                 session.size())
                                   : fmt::format(", checked by {} emulator process{}",
                                                 session.size(), session.size() == 1 ? "" : "es"));
    }
    return runner::kExitOk;
  };
}

}  // namespace etwire::cli

// `etwire validate`: every check of a run configuration (schema, cross-checks, the trace sets
// against the mapping) without running anything. Exit 0 with a one-line summary, or 2 with every
// problem, each at file:line:col. With --devices, it also sets the run's devices up as `run` does
// before its first packet (DPDK ports, RDMA devices and their ports, GIDs, DCQCN settings) and
// tears them down again.
#include <fmt/format.h>

#include <iostream>
#include <memory>
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

namespace etwire::cli {

namespace {

struct ValidateOptions {
  std::string config;
  std::vector<std::string> overrides;
  std::string profile;
  bool skip_traces = false;
  bool devices = false;
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
    control::LoadOptions options;
    if (!opts->profile.empty()) {
      try {
        options.overrides = control::read_device_profile(opts->profile);
      } catch (const control::DeviceProfileError& e) {
        std::cerr << "error: " << e.what() << "\n";
        return runner::kExitBadInput;
      }
    }
    options.overrides.insert(options.overrides.end(), opts->overrides.begin(),
                             opts->overrides.end());
    options.read_traces = !opts->skip_traces;
    auto loaded = control::load_config_file(opts->config, options);
    // A lab's configuration is checked with the profile it names applied as well, as its
    // prediction and replay apply it (a configuration on the twin has it applied already).
    std::string profile = opts->profile;
    if (!loaded.config.fabric.profile.empty()) profile = loaded.config.fabric.profile;
    if (!loaded.config.fabric.profile.empty() && !control::all_ports_on_loopback(loaded)) {
      try {
        options.overrides = control::prediction_profile(loaded, options.overrides);
      } catch (const control::DeviceProfileError& e) {
        std::cerr << "error: " << e.what() << " (fabric.profile)\n";
        return runner::kExitBadInput;
      }
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
                profile.empty() ? ""
                                : fmt::format(" (the device profile {}'s settings count as --set "
                                              "before the command line's)",
                                              profile)));
        code != runner::kExitOk) {
      return code;
    }
    if (opts->devices) {
      if (const int code = runner::check_devices(session, loaded); code != runner::kExitOk) {
        std::cerr << fmt::format("{}: the devices failed the checks `run` makes\n", opts->config);
        return code;
      }
    }
    if (session.rank() == 0) {
      std::cout << fmt::format("OK {}: {}{}\n", opts->config, control::summarize_config(loaded),
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

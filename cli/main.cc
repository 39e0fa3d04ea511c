// etwire: one binary, one subcommand per capability.
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <exception>
#include <iostream>
#include <utility>
#include <vector>

#include "cli/build_info.h"
#include "cli/commands.h"
#include "cli/unknown_command.h"
#include "cluster/session.h"
#include "runner/exit_codes.h"
#include "runner/stop_signals.h"
#include "trace/trace_error.h"

namespace {

// The stop handlers go in before anything that takes time, so that a stop request that comes
// while a run starts is kept for it (stop_signals.h): from the executable's preinit array, which
// the dynamic loader runs once every library is loaded and relocated and before any library's
// static initialisers (DPDK's driver registrations, protobuf's descriptors, libnl, hwloc), and
// long before main. A signal before that point, while the process is being loaded, ends it as by
// default; it has written nothing then, so nothing is lost (docs/reliability.md).
void install_stop_handlers_first(int, char**, char**) {
  etwire::runner::install_stop_handlers();
}

__attribute__((section(".preinit_array"),
               used)) void (*install_first)(int, char**, char**) = install_stop_handlers_first;

}  // namespace

int main(int argc, char** argv) {
  using namespace etwire::cli;
  // Under an MPI launcher this process is one of a run's emulator processes: MPI starts here,
  // before any thread, and ends when main returns.
  const auto session = etwire::cluster::Session::start(&argc, &argv);
  CLI::App app{
      "etwire: replays MLCommons Chakra execution traces as paced RoCEv2 traffic against a device "
      "under test, and records what the fabric did."};
  app.set_version_flag("--version",
                       fmt::format("etwire {} (commit {}; {} build)", kVersion, kCommit, kBuild));
  app.require_subcommand(1);
  bool verbose = false;
  app.add_flag("-v,--verbose", verbose,
               "Log debug detail to stderr: the configuration loaded, the data plane and ports "
               "set up, the files written");
  // Subcommands inherit this when added: `etwire run -v config.yaml` works as `etwire -v run`.
  app.fallthrough();

  std::vector<std::pair<CLI::App*, CommandAction>> commands;
  auto remember = [&](CommandAction action) {
    commands.emplace_back(app.get_subcommands({}).back(), std::move(action));
  };
  remember(add_inspect_command(app));
  remember(add_feed_command(app));
  remember(add_synth_command(app));
  remember(add_validate_command(app));
  remember(add_plan_command(app));
  remember(add_collective_command(app));
  remember(add_run_command(app));
  remember(add_sweep_command(app));
  remember(add_devices_command(app));
  remember(add_compare_command(app));
  remember(add_replay_command(app));
  remember(add_calibrate_command(app));
  remember(add_report_command(app));
  remember(add_timeline_command(app));
  remember(add_schema_command(app));
  remember(add_completion_command(app));

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // --help and --version end the parse too, with exit code 0.
    if (auto unknown =
            e.get_exit_code() == 0 ? std::nullopt : unknown_command_message(app, argc, argv)) {
      std::cerr << *unknown;
      return etwire::runner::kExitBadInput;
    }
    int code = app.exit(e);
    return code == 0 ? etwire::runner::kExitOk : etwire::runner::kExitBadInput;
  }
  // Logs and errors go to stderr so that stdout carries only the command's output (JSON, tables).
  spdlog::set_default_logger(spdlog::stderr_color_mt("etwire"));
  spdlog::set_level(verbose ? spdlog::level::debug : spdlog::level::info);
  spdlog::set_pattern("%^%l%$: %v");

  try {
    for (auto& [sub, action] : commands) {
      if (!sub->parsed()) continue;
      // Only a run or a sweep has something to save when it is stopped: the results so far.
      if (sub->get_name() == "run" || sub->get_name() == "sweep") {
        etwire::runner::keep_stop_requests();
      } else {
        etwire::runner::end_on_stop_signals();
      }
      return action();
    }
  } catch (const etwire::trace::TraceError& e) {
    spdlog::error("{}", e.what());
    return etwire::runner::kExitBadInput;
  } catch (const std::exception& e) {
    spdlog::error("{}", e.what());
    return etwire::runner::kExitFailure;
  }
  return etwire::runner::kExitFailure;
}

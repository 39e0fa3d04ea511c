// Each subcommand registers itself on the top-level app and returns the action to run once the
// command line has been parsed. The action returns the process exit code (exit_codes.h).
#pragma once

#include <CLI/CLI.hpp>

#include <functional>

namespace etwire::cli {

using CommandAction = std::function<int()>;

CommandAction add_inspect_command(CLI::App& app);
CommandAction add_feed_command(CLI::App& app);
CommandAction add_synth_command(CLI::App& app);
CommandAction add_validate_command(CLI::App& app);
CommandAction add_plan_command(CLI::App& app);
CommandAction add_collective_command(CLI::App& app);
CommandAction add_run_command(CLI::App& app);
CommandAction add_sweep_command(CLI::App& app);
CommandAction add_devices_command(CLI::App& app);
CommandAction add_compare_command(CLI::App& app);
CommandAction add_replay_command(CLI::App& app);
CommandAction add_calibrate_command(CLI::App& app);
CommandAction add_report_command(CLI::App& app);
CommandAction add_timeline_command(CLI::App& app);
CommandAction add_schema_command(CLI::App& app);
// Registered last: its script lists every command registered before it.
CommandAction add_completion_command(CLI::App& app);

}  // namespace etwire::cli

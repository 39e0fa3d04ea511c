// The `etwire synth` subcommands that live in files of their own. Each registers itself on the
// synth command and returns the action to run when it was the one parsed.
#pragma once

#include <CLI/CLI.hpp>

#include "cli/commands.h"

namespace etwire::cli {

CommandAction add_synth_model_command(CLI::App& synth);
CommandAction add_synth_moe_mix_command(CLI::App& synth);

}  // namespace etwire::cli

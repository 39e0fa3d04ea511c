#include "emulator/cli/commands.h"
namespace etwire::cli {
CommandAction add_synth_command(CLI::App& app) {
  app.add_subcommand("synth", "(being written)");
  return [] { return 1; };
}
}  // namespace etwire::cli

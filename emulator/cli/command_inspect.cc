#include "emulator/cli/commands.h"
namespace etwire::cli {
CommandAction add_inspect_command(CLI::App& app) {
  app.add_subcommand("inspect", "(being written)");
  return [] { return 1; };
}
}  // namespace etwire::cli

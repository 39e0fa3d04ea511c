#include "emulator/cli/commands.h"
namespace etwire::cli {
CommandAction add_feed_command(CLI::App& app) {
  app.add_subcommand("feed", "(being written)");
  return [] { return 1; };
}
}  // namespace etwire::cli
